// /v1/secrets: translation between HTTP and core::SecretService. No answer ever holds a value.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

// POST /v1/secrets: {"name", "value"}, both strings.
Result<core::SetSecret> ParseSecretSet(const json& body) {
  for (const auto& [key, _] : body.items()) {
    if (key != "name" && key != "value") return InvalidArgument(key, "unknown field '" + key + "'");
  }
  if (!body.contains("name") || !body["name"].is_string())
    return InvalidArgument("name", "name is required and must be a string");
  if (!body.contains("value") || !body["value"].is_string())
    return InvalidArgument("value", "value is required and must be a string");
  return core::SetSecret{body["name"], body["value"]};
}

json SecretJson(const core::Secret& s) {
  return {{"name", s.name},
          {"version", s.version},
          {"createdAt", FormatRfc3339(s.created_at)},
          {"updatedAt", FormatRfc3339(s.updated_at)}};
}

}  // namespace

void AddSecretRoutes(Router& router, core::SecretService& secrets) {
  // Creates the secret (201) or stores its next version (200).
  router.Add("POST", "/v1/secrets",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto request = ParseSecretSet(*body);
               if (!request.ok()) return ErrorResponse(request.status());
               auto saved = secrets.Set(who.org_id, *request, IdempotencyKeyOf(req, *body));
               if (!saved.ok()) return ErrorResponse(saved.status());
               return JsonResponse(saved->created ? 201 : 200, SecretJson(saved->secret));
             });
  router.Add("GET", "/v1/secrets",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = secrets.List(who.org_id, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, SecretJson));
             });
  router.Add("GET", "/v1/secrets/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto secret = secrets.Get(who.org_id, p.at("name"));
               if (!secret.ok()) return ErrorResponse(secret.status());
               return JsonResponse(200, SecretJson(*secret));
             });
  router.Add("DELETE", "/v1/secrets/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(secrets.Delete(who.org_id, p.at("name")));
             });
}

}  // namespace adapt::api
