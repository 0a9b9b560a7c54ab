// The value of one cookie of a request (the dashboard's session), read by the router.
#pragma once

#include <string>
#include <string_view>

#include "api/http_types.h"

namespace adapt::api {

// The value of cookie `name` in the request's Cookie header, "" when absent.
std::string CookieValue(const HttpRequest& request, std::string_view name);

}  // namespace adapt::api
