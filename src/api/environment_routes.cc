// GET /v1/environments: seed 000's environment aliases and the image sources accepted.
#include "api/errors.h"
#include "api/routes.h"

namespace adapt::api {

void AddEnvironmentRoutes(Router& router, const core::ImageCatalog& catalog) {
  router.Add("GET", "/v1/environments",
             [&](const HttpRequest&, const PathParams&, const core::Principal&) {
               return JsonResponse(200, core::ListEnvironments(catalog));
             });
}

}  // namespace adapt::api
