#include "api/http_response_fields.h"

#include <boost/beast/core/string.hpp>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/log.h"

namespace adapt::api {

std::string Quote(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse ServerErrorResponse(int status, const std::string& code, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return response;
}

bool IsSafeHeaderValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

bool IsSafeHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 &&
        std::strchr("!#$%&'*+-.^_`|~", c) == nullptr) {
      return false;
    }
  }
  return true;
}

// Beast does not validate field text, so a handler echoing client input could otherwise
// split the response.
void AddHandlerHeaders(boost::beast::http::fields& fields,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
  for (const auto& [name, value] : headers) {
    if (!IsSafeHeaderName(name) || !IsSafeHeaderValue(value)) {
      spdlog::warn("http: dropping invalid response header {}", Quote(name));
      continue;
    }
    if (boost::beast::iequals(name, "content-length") ||
        boost::beast::iequals(name, "transfer-encoding") ||
        boost::beast::iequals(name, "connection")) {
      continue;
    }
    fields.insert(name, value);
  }
}

void SetContentType(boost::beast::http::fields& fields, const std::string& content_type) {
  if (!content_type.empty() && IsSafeHeaderValue(content_type)) {
    fields.set(boost::beast::http::field::content_type, content_type);
  }
}

}  // namespace adapt::api
