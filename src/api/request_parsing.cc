#include "api/request_parsing.h"

#include <charconv>

#include "base/json_parse.h"

namespace adapt::api {

Result<nlohmann::json> ParseJsonBody(const HttpRequest& request) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos)
    return nlohmann::json::object();
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJson(request.body, "the request body"));
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  return body;
}

Result<int> QueryInt(const HttpRequest& request, const std::string& name, int fallback) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  int value = 0;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    return InvalidArgument(name, name + " must be an integer");
  return value;
}

}  // namespace adapt::api
