#include "base/list_cursor.h"

#include <charconv>

#include "base/hex.h"

namespace adapt {

Status CheckPageLimit(int limit) {
  if (limit < 1 || limit > kMaxPageLimit)
    return InvalidArgument("limit", "limit must be between 1 and " + std::to_string(kMaxPageLimit));
  return Status::Ok();
}

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

Result<std::string> ParseKeyListCursor(const std::string& cursor) {
  if (cursor.empty()) return std::string();
  std::optional<std::string> key;
  // A key is at most a few KiB (storage/object_key.h); anything longer was not issued here.
  if (cursor[0] == 'k' && cursor.size() > 1 && cursor.size() <= 8193)
    key = HexDecode(std::string_view(cursor).substr(1));
  if (!key) return InvalidArgument("cursor", "cursor is not one this server issued");
  return *key;
}

std::string KeyListCursor(const std::string& last_key) { return "k" + HexEncode(last_key); }

}  // namespace adapt
