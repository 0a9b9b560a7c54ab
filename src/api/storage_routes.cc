// /v1/storage: translation between HTTP and storage::VolumeService.
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddStorageRoutes(Router& router, storage::VolumeService& volumes) {
  router.Add("POST", "/v1/storage",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               return JsonOrError(201, volumes.Create(who.org_id, *body));
             });
  router.Add("GET", "/v1/storage",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               return JsonOrError(200, volumes.List(who.org_id));
             });
  router.Add("GET", "/v1/storage/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return JsonOrError(200, volumes.Get(who.org_id, p.at("name")));
             });
  // The confirmation comes as {"confirm": "<name>"} or ?confirm=<name>.
  router.Add("DELETE", "/v1/storage/{name}",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               for (const auto& [key, _] : body->items()) {
                 if (key != "confirm")
                   return ErrorResponse(InvalidArgument(key, "unknown field '" + key + "'"));
               }
               std::string confirm;
               if (body->contains("confirm")) {
                 if (!(*body)["confirm"].is_string())
                   return ErrorResponse(InvalidArgument(
                       "confirm", "confirm must be the storage's name, as a string"));
                 confirm = (*body)["confirm"];
               } else if (auto q = req.query.find("confirm"); q != req.query.end()) {
                 confirm = q->second;
               }
               return NoContentOrError(volumes.Delete(who.org_id, p.at("name"), confirm));
             });
}

}  // namespace adapt::api
