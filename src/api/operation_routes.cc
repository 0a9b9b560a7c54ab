// GET /v1/operations/{id}: translation between HTTP and core::OperationService. An image's
// pull or import keeps the shape it always had ({id, kind, phase, progress, imageId, error});
// a sandbox's checkpoint or restore says its sandbox and when it started and finished.
#include "api/errors.h"
#include "api/operation_json.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {

using nlohmann::json;

json OperationJson(const core::Operation& op) {
  json out = {{"id", op.id},
              {"kind", op.kind},
              {"phase", op.phase},
              {"progress", {{"bytes", op.bytes}, {"totalBytes", op.total_bytes}}},
              {"error", op.error ? json(*op.error) : json(nullptr)}};
  if (op.image_id) out["imageId"] = *op.image_id;
  if (op.app_id) out["appId"] = *op.app_id;
  if (op.release_id) out["releaseId"] = *op.release_id;
  if (op.sandbox_id) {
    out["sandboxId"] = *op.sandbox_id;
    out["startedAt"] = op.started_at ? json(FormatRfc3339(*op.started_at)) : json(nullptr);
    out["finishedAt"] = op.finished_at ? json(FormatRfc3339(*op.finished_at)) : json(nullptr);
  }
  return out;
}

void AddOperationRoutes(Router& router, core::OperationService& operations) {
  router.Add("GET", "/v1/operations/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto op = operations.Get(who, p.at("id"));
               if (!op.ok()) return ErrorResponse(op.status());
               return JsonResponse(200, OperationJson(*op));
             });
}

}  // namespace adapt::api
