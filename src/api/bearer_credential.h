// The bearer credential of a request (`Authorization: Bearer <text>`), read by the router for
// API keys and by /mcp for API keys and OAuth access tokens.
#pragma once

#include <string>

#include "api/http_types.h"

namespace adapt::api {

// The bearer key of a request, "" when none.
std::string BearerKey(const HttpRequest& request);

}  // namespace adapt::api
