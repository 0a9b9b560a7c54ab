// The edge where a Status becomes an HTTP answer: API.md's error format
// {"error": {"code", "message", "field"}} with a fitting status code.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "base/status.h"

namespace adapt::api {

int HttpStatusFor(Code code);
const char* ErrorCodeName(Code code);
HttpResponse ErrorResponse(const Status& status);
HttpResponse JsonResponse(int http_status, const nlohmann::json& body);

}  // namespace adapt::api
