// Text the CLI sends in a JSON string field (a command's stdin, a Python program), read from a
// stream with the API's bound: more than that is refused after one byte past it, not read whole
// into memory first for adaptd to refuse.
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>

namespace adapt::cli {

// The most a command's stdin or a Python program may hold (the API's limit, checked by adaptd).
inline constexpr size_t kMaxTextInputBytes = 8 << 20;

// All of `in`, or nullopt when it holds more than `limit` bytes.
std::optional<std::string> ReadAtMost(std::istream& in, size_t limit = kMaxTextInputBytes);

// Whether `data` can travel as a JSON string unchanged: UTF-8 without NUL (a stray byte would
// reach the sandbox as U+FFFD).
bool IsPlainText(const std::string& data);

}  // namespace adapt::cli
