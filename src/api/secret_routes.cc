// /v1/secrets: translation between HTTP and core::SecretService. No answer ever holds a value.
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddSecretRoutes(Router& router, core::SecretService& secrets) {
  // Creates the secret (201) or stores its next version (200).
  router.Add("POST", "/v1/secrets",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               bool created = false;
               auto secret = secrets.Set(who.org_id, *body, &created);
               return JsonOrError(created ? 201 : 200, secret);
             });
  router.Add("GET", "/v1/secrets",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               return JsonOrError(200, secrets.List(who.org_id));
             });
  router.Add("GET", "/v1/secrets/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return JsonOrError(200, secrets.Get(who.org_id, p.at("name")));
             });
  router.Add("DELETE", "/v1/secrets/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(secrets.Delete(who.org_id, p.at("name")));
             });
}

}  // namespace adapt::api
