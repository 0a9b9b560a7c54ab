#include "core/list_cursor.h"

#include <charconv>

namespace adapt::core {

Result<std::optional<int64_t>> ParseListCursor(const std::string& cursor) {
  if (cursor.empty()) return std::optional<int64_t>();
  int64_t seq = 0;
  const char* begin = cursor.data() + 1;
  const char* end = cursor.data() + cursor.size();
  auto [ptr, ec] = cursor[0] == 'c' && cursor.size() > 1
                       ? std::from_chars(begin, end, seq)
                       : std::from_chars_result{begin, std::errc::invalid_argument};
  if (ec != std::errc() || ptr != end || seq < 0)
    return InvalidArgument("cursor", "cursor is not one this server issued");
  return std::optional<int64_t>(seq);
}

std::optional<std::string> NextListCursor(const std::optional<int64_t>& next_seq) {
  if (!next_seq) return std::nullopt;
  return "c" + std::to_string(*next_seq);
}

}  // namespace adapt::core
