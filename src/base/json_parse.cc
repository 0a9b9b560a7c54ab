#include "base/json_parse.h"

namespace adapt {

using nlohmann::json;

Result<json> ParseJson(std::string_view text, const std::string& what, int max_depth) {
  bool too_deep = false;
  std::string member;       // the top-level member being read
  std::string deep_member;  // the one the nesting went too deep in
  // `depth` counts the arrays and objects already open around the event. A container past the
  // limit is discarded, so nothing deeper is ever built; the parser itself does not recurse.
  json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth < max_depth) return true;
        if (!too_deep) deep_member = member;
        too_deep = true;
        return false;
      case json::parse_event_t::key:
        if (depth == 1 && !too_deep && parsed.is_string()) member = parsed.get<std::string>();
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
  return value;
}

}  // namespace adapt
