#include "base/nano_amount.h"

#include <limits>

namespace adapt {

std::string FormatNanoAmount(int64_t nanos) {
  bool negative = nanos < 0;
  // Through uint64: -INT64_MIN does not fit an int64.
  uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  std::string fraction = std::to_string(magnitude % 1'000'000'000);
  fraction.insert(0, 9 - fraction.size(), '0');
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return (negative ? "-" : "") + std::to_string(magnitude / 1'000'000'000) + "." + fraction;
}

Result<int64_t> ParseNanoAmount(std::string_view text, const std::string& field,
                                bool allow_negative) {
  auto bad = [&] {
    return InvalidArgument(field, field +
                                      " must be a decimal amount such as 10 or 12.5 (at "
                                      "most 9 decimals" +
                                      std::string(allow_negative ? ")" : ", not negative)"));
  };
  bool negative = false;
  if (!text.empty() && text[0] == '-' && allow_negative) {
    negative = true;
    text.remove_prefix(1);
  }
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || fraction.size() > 9 || (dot != std::string_view::npos && fraction.empty()))
    return bad();
  uint64_t units = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return bad();
    units = units * 10 + static_cast<uint64_t>(c - '0');
    if (units > static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1'000'000'000))
      return InvalidArgument(field, field + " is too large");
  }
  uint64_t nanos = 0;
  for (size_t i = 0; i < 9; ++i) {
    char c = i < fraction.size() ? fraction[i] : '0';
    if (c < '0' || c > '9') return bad();
    nanos = nanos * 10 + static_cast<uint64_t>(c - '0');
  }
  uint64_t total = units * 1'000'000'000 + nanos;
  if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return InvalidArgument(field, field + " is too large");
  return negative ? -static_cast<int64_t>(total) : static_cast<int64_t>(total);
}

}  // namespace adapt
