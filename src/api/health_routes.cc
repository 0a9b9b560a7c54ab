#include "api/errors.h"
#include "api/routes.h"

namespace adapt::api {

void AddHealthRoutes(Router& router) {
  router.AddPublic("GET", "/healthz", [](const HttpRequest&, const PathParams&) {
    return JsonResponse(200, {{"status", "ok"}});
  });
}

}  // namespace adapt::api
