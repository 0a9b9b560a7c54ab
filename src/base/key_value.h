// KEY=VALUE text, as the CLI's --env and --label flags take it: split at the first '=', so a
// value may hold '=' itself. One parser, so every flag agrees on what a pair is.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace adapt {

// {"URL", "a=b"} for "URL=a=b"; nullopt without '=' or with an empty key.
inline std::optional<std::pair<std::string, std::string>> SplitKeyValue(std::string_view text) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) return std::nullopt;
  return std::pair(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
}

}  // namespace adapt
