// /v1/sandboxes/{id}/endpoints and /v1/endpoints: translation between HTTP and
// core::EndpointService.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "api/sandbox_json.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

Result<core::CreateEndpoint> ParseCreateEndpoint(const json& body) {
  for (const auto& [k, _] : body.items())
    if (k != "port") return InvalidArgument(k, "unknown field '" + k + "'");
  if (!body.contains("port") || !body["port"].is_number_integer())
    return InvalidArgument("port", "port must be an integer from 1 to 65535");
  return core::CreateEndpoint{body["port"].get<int64_t>()};
}

// One page of the sandbox's endpoints (`sandbox_id` empty: the organization's).
HttpResponse ListPage(core::EndpointService& endpoints, const HttpRequest& req,
                      const core::Principal& who, const std::string& sandbox_id) {
  auto page = PageRequestFromQuery(req);
  if (!page.ok()) return ErrorResponse(page.status());
  auto listed = endpoints.List(who, sandbox_id, *page);
  if (!listed.ok()) return ErrorResponse(listed.status());
  return JsonResponse(200, PageJson(*listed, EndpointJson));
}

}  // namespace

void AddEndpointRoutes(Router& router, core::EndpointService& endpoints) {
  router.Add("POST", "/v1/sandboxes/{id}/endpoints",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto request = ParseCreateEndpoint(*body);
               if (!request.ok()) return ErrorResponse(request.status());
               auto made =
                   endpoints.Create(who, p.at("id"), *request, IdempotencyKeyOf(req, *body));
               if (!made.ok()) return ErrorResponse(made.status());
               return JsonResponse(201, EndpointJson(*made));
             });
  router.Add("GET", "/v1/sandboxes/{id}/endpoints",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               return ListPage(endpoints, req, who, p.at("id"));
             });
  // Every endpoint of the organization (MCP's list_public_apps).
  router.Add("GET", "/v1/endpoints",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               return ListPage(endpoints, req, who, "");
             });
  // Every endpoint to one port (MCP's disable_sandbox_app by port); none is no error.
  router.Add(
      "DELETE", "/v1/sandboxes/{id}/endpoints",
      [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        for (const auto& [k, _] : req.query) {
          if (k != "port") return ErrorResponse(InvalidArgument(k, "unknown query parameter " + k));
        }
        if (!req.query.count("port"))
          return ErrorResponse(InvalidArgument("port", "the port query parameter is required"));
        auto port = QueryInt(req, "port", 0);
        if (!port.ok()) return ErrorResponse(port.status());
        if (*port < 1 || *port > 65535)
          return ErrorResponse(InvalidArgument("port", "port must be an integer from 1 to 65535"));
        auto removed = endpoints.Remove(who, {p.at("id"), std::nullopt, *port});
        if (!removed.ok()) return ErrorResponse(removed.status());
        return JsonResponse(200, {{"sandboxId", p.at("id")}, {"removed", *removed}});
      });
  router.Add("DELETE", "/v1/sandboxes/{id}/endpoints/{eid}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(endpoints.Delete(who, p.at("id"), p.at("eid")));
             });
}

}  // namespace adapt::api
