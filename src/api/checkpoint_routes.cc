// /v1/sandboxes/{id}/checkpoints and /v1/checkpoints (the organization's, every sandbox's):
// translation between HTTP and core::CheckpointService.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "api/sandbox_json.h"
#include "base/time.h"

namespace adapt::api {
namespace {

nlohmann::json CheckpointToJson(const core::Checkpoint& c) {
  return {{"name", c.name},
          {"sandboxId", c.sandbox_id},
          {"sizeBytes", c.size_bytes},
          {"createdAt", c.created_at > 0 ? nlohmann::json(FormatRfc3339(c.created_at))
                                         : nlohmann::json(nullptr)},
          {"keep", c.keep},
          {"runscVersion", c.runsc_version},
          {"platform", c.platform},
          {"sandboxDeleted", c.sandbox_deleted},
          {"sandboxLabels", c.sandbox_labels}};
}

// GET /v1/checkpoints's query: limit, cursor, and the filters sandboxId and kept.
Result<core::ListCheckpointsRequest> ListCheckpointsFromQuery(const HttpRequest& req) {
  ASSIGN_OR_RETURN(PageRequest page, PageRequestFromQuery(req, {"sandboxId", "kept"}));
  core::ListCheckpointsRequest list;
  list.limit = page.limit;
  list.cursor = page.cursor;
  if (req.query.count("sandboxId")) list.sandbox_id = req.query.at("sandboxId");
  if (req.query.count("kept")) {
    const std::string& kept = req.query.at("kept");
    if (kept != "true" && kept != "false")
      return InvalidArgument("kept", "kept must be true or false");
    list.kept = kept == "true";
  }
  return list;
}

}  // namespace

void AddCheckpointRoutes(Router& router, core::CheckpointService& checkpoints) {
  router.Add("GET", "/v1/checkpoints",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto list = ListCheckpointsFromQuery(req);
               if (!list.ok()) return ErrorResponse(list.status());
               auto page = checkpoints.ListOrganization(who, *list);
               if (!page.ok()) return ErrorResponse(page.status());
               return JsonResponse(200, PageJson(*page, CheckpointToJson));
             });
  router.Add("POST", "/v1/sandboxes/{id}/checkpoints",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               for (const auto& [key, value] : body->items())
                 if (key != "name" && key != "keep")
                   return ErrorResponse(InvalidArgument(key, "unknown field " + key));
               auto name = OptionalStringField(*body, "name");
               if (!name.ok()) return ErrorResponse(name.status());
               bool keep = false;
               if (body->contains("keep")) {
                 if (!(*body)["keep"].is_boolean())
                   return ErrorResponse(InvalidArgument("keep", "keep must be true or false"));
                 keep = (*body)["keep"].get<bool>();
               }
               auto taken =
                   checkpoints.Take(who, p.at("id"), *name, keep, IdempotencyKeyOf(req, *body));
               if (!taken.ok()) return ErrorResponse(taken.status());
               nlohmann::json out = CheckpointToJson(taken->checkpoint);
               out["operationId"] = taken->operation_id;
               return JsonResponse(201, out);
             });
  router.Add("GET", "/v1/sandboxes/{id}/checkpoints",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = checkpoints.List(who, p.at("id"), *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, CheckpointToJson));
             });
  router.Add("DELETE", "/v1/sandboxes/{id}/checkpoints/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(checkpoints.Delete(who, p.at("id"), p.at("name")));
             });
  router.Add("POST", "/v1/sandboxes/{id}/checkpoints/{name}/restore",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               if (!body->empty())
                 return ErrorResponse(
                     InvalidArgument(body->begin().key(), "unknown field " + body->begin().key()));
               auto restored = checkpoints.Restore(who, p.at("id"), p.at("name"));
               if (!restored.ok()) return ErrorResponse(restored.status());
               nlohmann::json out = SandboxToJson(restored->sandbox);
               out["operationId"] = restored->operation_id;
               return JsonResponse(200, out);
             });
}

}  // namespace adapt::api
