#include "api/resource_responses.h"

#include "api/errors.h"

namespace adapt::api {

HttpResponse JsonOrError(int http_status, const Result<nlohmann::json>& result) {
  if (!result.ok()) return ErrorResponse(result.status());
  return JsonResponse(http_status, *result);
}

HttpResponse NoContentOrError(const Status& status) {
  if (!status.ok()) return ErrorResponse(status);
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  return r;
}

}  // namespace adapt::api
