#include "base/json_parse.h"

#include <set>
#include <vector>

namespace adapt {

using nlohmann::json;

Result<json> ParseJson(std::string_view text, const std::string& what, int max_depth) {
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
    return InvalidArgument(twice_member, what + " gives the name '" + twice +
                                             "' twice in one object" +
                                             (twice_member == twice ? "" : ", in " + twice_member));
  return value;
}

}  // namespace adapt
