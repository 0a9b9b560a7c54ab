// Reading JSON bodies and query parameters, with API.md errors for bad input.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "base/status.h"

namespace adapt::api {

// An empty body is {}; anything but a JSON object is a 400.
Result<nlohmann::json> ParseJsonBody(const HttpRequest& request);

// The integer query parameter `name`, `fallback` when absent; 400 when not an integer.
Result<int> QueryInt(const HttpRequest& request, const std::string& name, int fallback);

}  // namespace adapt::api
