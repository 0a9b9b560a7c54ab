// GET /v1/environments: seed 000's environment aliases and the image sources accepted.
#include "api/errors.h"
#include "api/routes.h"

namespace adapt::api {

void AddEnvironmentRoutes(Router& router, const core::ImageCatalog& catalog,
                          const core::ImagePolicy& policy) {
  router.Add("GET", "/v1/environments",
             [&catalog, &policy](const HttpRequest&, const PathParams&, const core::Principal&) {
               using nlohmann::json;
               core::EnvironmentCatalog envs = core::ListEnvironments(catalog, policy);
               json list = json::array();
               for (const auto& e : envs.environments)
                 list.push_back({{"alias", e.alias},
                                 {"kind", e.kind},
                                 {"description", e.description},
                                 {"image", e.image},
                                 {"available", e.available},
                                 {"reason", e.reason ? json(*e.reason) : json(nullptr)}});
               return JsonResponse(200, {{"environments", list},
                                         {"imageSources", envs.image_sources},
                                         {"developerPublicImages", envs.developer_public_images},
                                         {"trustedImageSources", envs.trusted_image_sources},
                                         {"imagePolicy", envs.image_policy}});
             });
}

}  // namespace adapt::api
