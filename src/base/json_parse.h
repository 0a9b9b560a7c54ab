// Parsing JSON that someone else wrote (request bodies, JSON-RPC messages, registry answers,
// files of image archives) with a bound on nesting. nlohmann's parser keeps its own stack, but
// dump(), copies and comparisons of a value recurse once per level: a 400 KB body of '['
// overflowed a worker's stack and killed adaptd. ParseJson refuses such text while parsing,
// before any deep value exists.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace adapt {

// Arrays and objects nested more deeply than this are refused. No request adaptd answers,
// and no image config, needs more than a handful of levels.
inline constexpr int kMaxJsonDepth = 64;

// The value of `text`. InvalidArgument when it is not JSON ("<what> is not valid JSON") or
// nests arrays and objects deeper than `max_depth` ("<what> nests arrays and objects deeper
// than 64 levels, in <member>"); the error's field is the top-level member the nesting was
// found in, empty when the top level is not an object. `what` names the text in those
// sentences ("the request body"). Never throws.
Result<nlohmann::json> ParseJson(std::string_view text, const std::string& what,
                                 int max_depth = kMaxJsonDepth);

// `text`, a JSON array, handed to `take` one element at a time as each is parsed, none kept:
// memory holds one element, however many the array has (a reply a sandbox wrote, whose tiny
// elements would take twenty times their text's size as one value). The first error `take`
// returns is the result (parsing goes on to the end, taking nothing more); ParseJson's errors
// otherwise, and "<what> is not a JSON array" when the top level is not one. Never throws.
Status ParseJsonArray(std::string_view text, const std::string& what,
                      const std::function<Status(nlohmann::json&& element)>& take,
                      int max_depth = kMaxJsonDepth);

}  // namespace adapt
