// The answers every resource route gives once its service has spoken: the service's JSON with
// the route's success status, its error in API.md's format, or an empty 204 for a delete.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "base/status.h"

namespace adapt::api {

// `result`'s JSON with `http_status` when it holds one; its error otherwise.
HttpResponse JsonOrError(int http_status, const Result<nlohmann::json>& result);

// 204 with no body (and no Content-Type) when `status` is ok; its error otherwise.
HttpResponse NoContentOrError(const Status& status);

}  // namespace adapt::api
