// /v1/orgs and their keys (the admin key), and /v1/keys (the caller's own organization's keys):
// translation to core::Auth.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

json ExpiresAt(int64_t expires_at) {
  return expires_at == 0 ? json(nullptr) : json(FormatRfc3339(expires_at));
}

// Never the key's text nor its hash.
json KeyJson(const store::ApiKeyRecord& k) {
  return {{"id", k.id},
          {"orgId", k.org_id},
          {"name", k.name},
          {"admin", k.is_admin},
          {"createdAt", FormatRfc3339(k.created_at)},
          {"expiresAt", ExpiresAt(k.expires_at)}};
}

// The one answer that holds the key's text.
json NewKeyJson(const core::NewApiKey& key) {
  const auto& r = key.record;
  json out = {{"id", r.id},
              {"orgId", r.org_id},
              {"name", r.name},
              {"createdAt", FormatRfc3339(r.created_at)},
              {"expiresAt", ExpiresAt(r.expires_at)}};
  // An Idempotency-Key's replay shows no text: it was shown once, to the request that made it.
  if (!key.replayed) out["key"] = key.key;
  return out;
}

// A deletion a failure stopped part way shows as "deleting" until a repeat finishes it.
json OrgJson(const store::OrgRecord& o) {
  return {{"id", o.id},
          {"name", o.name},
          {"admin", o.is_admin},
          {"status", o.deleting_at == 0 ? "active" : "deleting"},
          {"createdAt", FormatRfc3339(o.created_at)}};
}

Status OnlyFields(const json& body, std::initializer_list<const char*> known) {
  for (const auto& [key, _] : body.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) return InvalidArgument(key, "unknown field '" + key + "'");
  }
  return Status::Ok();
}

Result<std::string> OptionalString(const json& body, const char* field) {
  if (!body.contains(field) || body[field].is_null()) return std::string();
  if (!body[field].is_string())
    return InvalidArgument(field, std::string(field) + " must be a string");
  return body[field].get<std::string>();
}

// The body of a key create that ParseCreateKey accepted, for its Idempotency-Key's fingerprint.
json KeyBodyOf(const HttpRequest& req) {
  auto body = ParseJsonBody(req);
  return body.ok() ? *body : json::object();
}

Result<core::CreateKeyRequest> ParseCreateKey(const HttpRequest& req) {
  ASSIGN_OR_RETURN(json body, ParseJsonBody(req));
  RETURN_IF_ERROR(OnlyFields(body, {"name", "ttlSeconds"}));
  core::CreateKeyRequest out;
  ASSIGN_OR_RETURN(out.name, OptionalString(body, "name"));
  ASSIGN_OR_RETURN(out.ttl_seconds, OptionalIntField(body, "ttlSeconds"));
  return out;
}

void AddOwnKeyRoutes(Router& router, core::Auth& auth) {
  router.Add("POST", "/v1/keys",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto request = ParseCreateKey(req);
               if (!request.ok()) return ErrorResponse(request.status());
               auto key = auth.CreateOwnKey(who, *request, IdempotencyKeyOf(req, KeyBodyOf(req)));
               if (!key.ok()) return ErrorResponse(key.status());
               HttpResponse r = JsonResponse(201, NewKeyJson(*key));
               r.headers.emplace_back("Cache-Control", "no-store");
               return r;
             });
  router.Add("GET", "/v1/keys",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto keys = auth.ListOwnKeys(who, *page);
               if (!keys.ok()) return ErrorResponse(keys.status());
               return JsonResponse(200, PageJson(*keys, KeyJson));
             });
  router.Add("DELETE", "/v1/keys/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(auth.RevokeOwnKey(who, p.at("id")));
             });
}

}  // namespace

void AddOrgRoutes(Router& router, core::Auth& auth, core::OrgDeletion& deletion) {
  router.Add("POST", "/v1/orgs",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               if (Status st = OnlyFields(*body, {"name"}); !st.ok()) return ErrorResponse(st);
               auto name = OptionalString(*body, "name");
               if (!name.ok()) return ErrorResponse(name.status());
               auto org = auth.CreateOrg(who, *name, IdempotencyKeyOf(req, *body));
               if (!org.ok()) return ErrorResponse(org.status());
               return JsonResponse(201, OrgJson(*org));
             });
  router.Add("GET", "/v1/orgs",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto orgs = auth.ListOrgs(who, *page);
               if (!orgs.ok()) return ErrorResponse(orgs.status());
               return JsonResponse(200, PageJson(*orgs, OrgJson));
             });
  // The confirmation comes as {"confirm": "<name>"} or ?confirm=<name>, as storage's.
  router.Add("DELETE", "/v1/orgs/{id}",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto confirm = DeleteConfirmation(req, "the organization's name");
               if (!confirm.ok()) return ErrorResponse(confirm.status());
               return NoContentOrError(deletion.Delete(who, p.at("id"), *confirm));
             });
  router.Add("POST", "/v1/orgs/{id}/keys",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto request = ParseCreateKey(req);
               if (!request.ok()) return ErrorResponse(request.status());
               auto key = auth.CreateKey(who, p.at("id"), request->name, request->ttl_seconds,
                                         IdempotencyKeyOf(req, KeyBodyOf(req)));
               if (!key.ok()) return ErrorResponse(key.status());
               return JsonResponse(201, NewKeyJson(*key));
             });
  router.Add("GET", "/v1/orgs/{id}/keys",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto keys = auth.ListKeys(who, p.at("id"), *page);
               if (!keys.ok()) return ErrorResponse(keys.status());
               return JsonResponse(200, PageJson(*keys, KeyJson));
             });
  router.Add("DELETE", "/v1/orgs/{id}/keys/{keyId}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(auth.DeleteKey(who, p.at("id"), p.at("keyId")));
             });
  AddOwnKeyRoutes(router, auth);
}

}  // namespace adapt::api
