#include "base/json_parse.h"

#include <functional>
#include <set>
#include <vector>

namespace adapt {

using nlohmann::json;

namespace {

// ParseJson's work; with `take`, each element of a top-level array is handed to it once
// complete and then dropped from the array, so that only one element exists at a time.
Result<json> Parse(std::string_view text, const std::string& what, int max_depth,
                   const std::function<Status(json&&)>* take) {
  Status taken = Status::Ok();  // the first element `take` refused
  bool top_is_array = false;
  bool too_deep = false;
  std::string member;       // the top-level member being read
  std::string deep_member;  // the one the nesting went too deep in
  // The names already read in the object open at each depth: a name given twice is refused,
  // since readers differ on which one counts (nlohmann keeps the last, others the first), and
  // a check by one and a use by another could then see different values.
  std::vector<std::set<std::string>> names;
  std::string twice;         // the first name found twice
  std::string twice_member;  // the top-level member it was found in
  // `depth` counts the arrays and objects already open around the event. A container past the
  // limit is discarded, so nothing deeper is ever built; the parser itself does not recurse.
  json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    // An element of the top-level array is complete: a value, or a container's end at depth 1
    // (nlohmann gives a container's end the depth of its start).
    if (take && depth == 0 && event == json::parse_event_t::array_start) top_is_array = true;
    bool element_done =
        take && top_is_array && depth == 1 &&
        (event == json::parse_event_t::value || event == json::parse_event_t::object_end ||
         event == json::parse_event_t::array_end);
    if (element_done) {
      if (!too_deep && taken.ok()) taken = (*take)(std::move(parsed));
      return false;  // not kept in the array
    }
    switch (event) {
      case json::parse_event_t::object_start:
        if (depth < max_depth) {
          if (names.size() <= static_cast<size_t>(depth)) names.resize(depth + 1);
          names[depth].clear();
        }
        [[fallthrough]];
      case json::parse_event_t::array_start:
        if (depth < max_depth) return true;
        if (!too_deep) deep_member = member;
        too_deep = true;
        return false;
      case json::parse_event_t::key:
        if (too_deep || !parsed.is_string()) return true;
        if (depth == 1) member = parsed.get<std::string>();
        if (depth >= 1 && static_cast<size_t>(depth) <= names.size() && twice.empty() &&
            !names[depth - 1].insert(parsed.get<std::string>()).second) {
          twice = parsed.get<std::string>();
          twice_member = member;
        }
        return true;
      default:
        return true;
    }
  };
  json value;
  try {
    value = json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/false);
  } catch (const json::exception&) {
    value = json(json::value_t::discarded);
  }
  if (too_deep)
    return InvalidArgument(deep_member, what + " nests arrays and objects deeper than " +
                                            std::to_string(max_depth) + " levels" +
                                            (deep_member.empty() ? "" : ", in " + deep_member));
  if (value.is_discarded()) return InvalidArgument("", what + " is not valid JSON");
  if (!twice.empty())
    return InvalidArgument(
        twice_member,
        what + " gives the name '" + twice + "' twice in one object" +
            (twice_member.empty() || twice_member == twice ? "" : ", in " + twice_member));
  if (take && !value.is_array()) return InvalidArgument("", what + " is not a JSON array");
  RETURN_IF_ERROR(taken);
  return value;
}

}  // namespace

Result<json> ParseJson(std::string_view text, const std::string& what, int max_depth) {
  return Parse(text, what, max_depth, nullptr);
}

Status ParseJsonArray(std::string_view text, const std::string& what,
                      const std::function<Status(json&& element)>& take, int max_depth) {
  return Parse(text, what, max_depth, &take).status();
}

}  // namespace adapt
