// /v1/secrets: translation between HTTP and core::SecretService. No answer ever holds a value.
#include "api/errors.h"
#include "api/request_parsing.h"
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
               if (!secret.ok()) return ErrorResponse(secret.status());
               return JsonResponse(created ? 201 : 200, *secret);
             });
  router.Add("GET", "/v1/secrets",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto list = secrets.List(who.org_id);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, *list);
             });
  router.Add("GET", "/v1/secrets/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto secret = secrets.Get(who.org_id, p.at("name"));
               if (!secret.ok()) return ErrorResponse(secret.status());
               return JsonResponse(200, *secret);
             });
  router.Add("DELETE", "/v1/secrets/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               Status st = secrets.Delete(who.org_id, p.at("name"));
               if (!st.ok()) return ErrorResponse(st);
               HttpResponse r;
               r.status = 204;
               r.content_type.clear();
               return r;
             });
}

}  // namespace adapt::api
