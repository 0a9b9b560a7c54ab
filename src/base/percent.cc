#include "base/percent.h"

#include "base/hex.h"

namespace adapt {
namespace {

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// The byte of the escape at text[i] ('%'); nullopt unless two hex digits follow.
std::optional<std::string> EscapedByte(std::string_view text, size_t i) {
  if (i + 2 >= text.size()) return std::nullopt;
  return HexDecode(text.substr(i + 1, 2));
}

std::optional<std::string> Decode(std::string_view text, PlusSign plus, bool lenient) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (auto byte = EscapedByte(text, i)) {
        out += *byte;
        i += 2;
        continue;
      }
      if (!lenient) return std::nullopt;
    } else if (c == '+' && plus == PlusSign::kSpace) {
      c = ' ';
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string PercentEncode(std::string_view bytes, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if (Unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kDigits[c >> 4], kDigits[c & 15]};
    }
  }
  return out;
}

std::optional<std::string> PercentDecode(std::string_view text, PlusSign plus) {
  return Decode(text, plus, false);
}

std::string PercentDecodeLenient(std::string_view text, PlusSign plus) {
  return *Decode(text, plus, true);
}

}  // namespace adapt
