#include "api/errors.h"

#include "base/client_message.h"

namespace adapt::api {

int HttpStatusFor(Code code) {
  switch (code) {
    case Code::kOk:
      return 200;
    case Code::kInvalidArgument:
      return 400;
    case Code::kUnauthenticated:
      return 401;
    case Code::kPermissionDenied:
      return 403;
    case Code::kNotFound:
      return 404;
    case Code::kConflict:
      return 409;
    case Code::kPayloadTooLarge:
      return 413;
    case Code::kUnsupported:
      return 422;
    case Code::kResourceExhausted:
      return 429;
    case Code::kPaymentRequired:
      return 402;
    case Code::kUnavailable:
      return 503;
    case Code::kInternal:
      return 500;
  }
  return 500;
}

const char* ErrorCodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kUnauthenticated:
      return "unauthenticated";
    case Code::kPermissionDenied:
      return "permission_denied";
    case Code::kNotFound:
      return "not_found";
    case Code::kConflict:
      return "conflict";
    case Code::kPayloadTooLarge:
      return "payload_too_large";
    case Code::kUnsupported:
      return "unsupported";
    case Code::kResourceExhausted:
      return "resource_exhausted";
    case Code::kPaymentRequired:
      return "payment_required";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kInternal:
      return "internal";
  }
  return "internal";
}

HttpResponse JsonResponse(int http_status, const nlohmann::json& body) {
  HttpResponse r;
  r.status = http_status;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

HttpResponse ErrorResponse(const Status& status) {
  nlohmann::json err = {{"code", ErrorCodeName(status.code())},
                        {"message", ClientMessage(status, "REST request")}};
  if (!status.field().empty()) err["field"] = status.field();
  HttpResponse r = JsonResponse(HttpStatusFor(status.code()), {{"error", err}});
  if (status.code() == Code::kUnauthenticated) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

}  // namespace adapt::api
