// GET /v1/environments: seed 000's environment aliases and the image sources accepted; GET
// /v1/gpu-types: the GPU types new GPU sandboxes can have (seed 000's list_gpu_types).
#include "api/errors.h"
#include "api/routes.h"
#include "core/gpu_types.h"

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
  // A list in API.md's shape (one page: the types are few), with what it means here.
  router.Add(
      "GET", "/v1/gpu-types", [](const HttpRequest&, const PathParams&, const core::Principal&) {
        using nlohmann::json;
        core::GpuTypeCatalog catalog = core::ListGpuTypes();
        json items = json::array();
        for (const auto& t : catalog.gpu_types)
          items.push_back({{"type", t.type}, {"memoryGiB", t.memory_gib}});
        return JsonResponse(
            200, {{"items", items}, {"nextCursor", nullptr}, {"explanation", catalog.explanation}});
      });
}

}  // namespace adapt::api
