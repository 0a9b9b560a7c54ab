// List cursors: opaque to clients ("c" + the store's sequence number), checked on the way in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace adapt::core {

// Empty: the first page. Anything this server did not issue is a 400 on field "cursor".
Result<std::optional<int64_t>> ParseListCursor(const std::string& cursor);

// The cursor of the next page: unset on the last page.
std::optional<std::string> NextListCursor(const std::optional<int64_t>& next_seq);

}  // namespace adapt::core
