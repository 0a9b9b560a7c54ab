// /v1/sandboxes: translation between HTTP and core::SandboxService, nothing more.
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddSandboxRoutes(Router& router, core::SandboxService& sandboxes) {
  router.Add("POST", "/v1/sandboxes",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               std::optional<std::string> key;
               if (req.headers.count("idempotency-key")) key = req.Header("idempotency-key");
               auto created = sandboxes.Create(who, *body, key);
               return JsonOrError(201, created);
             });
  router.Add("GET", "/v1/sandboxes",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto limit = QueryInt(req, "limit", 50);
               if (!limit.ok()) return ErrorResponse(limit.status());
               core::ListSandboxesRequest list;
               list.limit = *limit;
               if (req.query.count("query")) list.query = req.query.at("query");
               if (req.query.count("cursor")) list.cursor = req.query.at("cursor");
               auto page = sandboxes.List(who, list);
               return JsonOrError(200, page);
             });
  router.Add("GET", "/v1/sandboxes/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto sandbox = sandboxes.Get(who, p.at("id"));
               return JsonOrError(200, sandbox);
             });
  router.Add("DELETE", "/v1/sandboxes/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto outcome = sandboxes.Delete(who, p.at("id"));
               if (!outcome.ok()) return ErrorResponse(outcome.status());
               if (outcome->done) return NoContentOrError(Status::Ok());
               auto sandbox = sandboxes.Get(who, p.at("id"));
               return JsonResponse(202, sandbox.ok() ? *sandbox : nlohmann::json::object());
             });
  // Stop and start take no fields; an empty body or {} is accepted.
  auto no_fields = [](const HttpRequest& req) -> Status {
    ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(req));
    if (!body.empty())
      return InvalidArgument(body.begin().key(), "unknown field " + body.begin().key());
    return Status::Ok();
  };
  router.Add(
      "POST", "/v1/sandboxes/{id}/stop",
      [&, no_fields](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        if (Status st = no_fields(req); !st.ok()) return ErrorResponse(st);
        auto sandbox = sandboxes.Stop(who, p.at("id"));
        return JsonOrError(200, sandbox);
      });
  router.Add(
      "POST", "/v1/sandboxes/{id}/start",
      [&, no_fields](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        if (Status st = no_fields(req); !st.ok()) return ErrorResponse(st);
        auto sandbox = sandboxes.Start(who, p.at("id"));
        return JsonOrError(202, sandbox);
      });
}

}  // namespace adapt::api
