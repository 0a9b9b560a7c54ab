// /v1/sandboxes/{id}/endpoints: translation between HTTP and core::EndpointService.
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/routes.h"

namespace adapt::api {

void AddEndpointRoutes(Router& router, core::EndpointService& endpoints) {
  router.Add("POST", "/v1/sandboxes/{id}/endpoints",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto created = endpoints.Create(who, p.at("id"), *body);
               if (!created.ok()) return ErrorResponse(created.status());
               return JsonResponse(201, *created);
             });
  router.Add("GET", "/v1/sandboxes/{id}/endpoints",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto list = endpoints.List(who, p.at("id"));
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, *list);
             });
  router.Add("DELETE", "/v1/sandboxes/{id}/endpoints/{eid}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               Status st = endpoints.Delete(who, p.at("id"), p.at("eid"));
               if (!st.ok()) return ErrorResponse(st);
               HttpResponse r;
               r.status = 204;
               r.content_type.clear();
               return r;
             });
}

}  // namespace adapt::api
