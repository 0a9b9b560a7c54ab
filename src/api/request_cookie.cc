#include "api/request_cookie.h"

namespace adapt::api {

std::string CookieValue(const HttpRequest& request, std::string_view name) {
  std::string header = request.Header("cookie");
  std::string_view rest = header;
  while (!rest.empty()) {
    size_t end = rest.find(';');
    std::string_view pair = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || pair.substr(0, eq) != name) continue;
    return std::string(pair.substr(eq + 1));
  }
  return "";
}

}  // namespace adapt::api
