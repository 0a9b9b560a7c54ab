#include "base/case_fold.h"

#include <locale.h>
#include <wctype.h>

#include "base/text.h"

namespace adapt {
namespace {

// Never freed: made once, read by every thread (towlower_l takes it as it is).
locale_t Utf8Locale() {
  static locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  return locale;
}

uint32_t Decode(std::string_view s, size_t i, size_t len) {
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k])); };
  if (len == 1) return byte(0);
  uint32_t cp = byte(0) & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (byte(k) & 0x3F);
  return cp;
}

void Encode(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string FoldCase(std::string_view text) {
  locale_t locale = Utf8Locale();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {  // not UTF-8: kept as it is
      out += text[i++];
      continue;
    }
    uint32_t cp = Decode(text, i, len);
    if (cp < 0x80) {
      out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp);
    } else {
      auto lower = locale ? towlower_l(static_cast<wint_t>(cp), locale) : static_cast<wint_t>(cp);
      // A mapping to something that is no valid code point (none is known) keeps the original.
      Encode(lower > 0 && lower <= 0x10FFFF ? static_cast<uint32_t>(lower) : cp, out);
    }
    i += len;
  }
  return out;
}

}  // namespace adapt
