#include "api/request_parsing.h"

#include <charconv>

namespace adapt::api {

Result<nlohmann::json> ParseJsonBody(const HttpRequest& request) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos)
    return nlohmann::json::object();
  auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return InvalidArgument("", "the request body is not valid JSON");
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
