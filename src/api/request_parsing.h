// Reading JSON bodies and query parameters, with API.md errors for bad input.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "base/status.h"

namespace adapt::api {

// An empty body is {}; anything but a JSON object is a 400, and so is one nested deeper than
// kMaxJsonDepth (base/json_parse.h), naming the member it was found in.
Result<nlohmann::json> ParseJsonBody(const HttpRequest& request);

// The integer query parameter `name`, `fallback` when absent; 400 when not an integer.
Result<int> QueryInt(const HttpRequest& request, const std::string& name, int fallback);

}  // namespace adapt::api
