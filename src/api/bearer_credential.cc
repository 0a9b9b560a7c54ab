#include "api/bearer_credential.h"

#include <strings.h>

#include <string_view>

namespace adapt::api {

std::string BearerKey(const HttpRequest& request) {
  std::string h = request.Header("authorization");
  static constexpr std::string_view kPrefix = "Bearer ";
  if (h.size() <= kPrefix.size()) return "";
  if (strncasecmp(h.c_str(), kPrefix.data(), kPrefix.size()) != 0) return "";
  return h.substr(kPrefix.size());
}

}  // namespace adapt::api
