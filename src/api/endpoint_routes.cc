// /v1/sandboxes/{id}/endpoints: translation between HTTP and core::EndpointService.
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddEndpointRoutes(Router& router, core::EndpointService& endpoints) {
  router.Add("POST", "/v1/sandboxes/{id}/endpoints",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               return JsonOrError(201, endpoints.Create(who, p.at("id"), *body));
             });
  router.Add("GET", "/v1/sandboxes/{id}/endpoints",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return JsonOrError(200, endpoints.List(who, p.at("id")));
             });
  router.Add("DELETE", "/v1/sandboxes/{id}/endpoints/{eid}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(endpoints.Delete(who, p.at("id"), p.at("eid")));
             });
}

}  // namespace adapt::api
