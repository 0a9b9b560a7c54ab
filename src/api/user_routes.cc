// /v1/orgs/{id}/users and /v1/users (admin only), DELETE /v1/users/{id} and
// PUT /v1/users/{id}/password (core::Users says who may): translation to core::Users.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

// Never the password hash: it stays in the store.
json UserJson(const store::UserRecord& u) {
  return {{"id", u.id},
          {"orgId", u.org_id},
          {"email", u.email},
          {"createdAt", FormatRfc3339(u.created_at)}};
}

Result<std::string> StringField(const json& body, const char* field, bool required) {
  if (!body.contains(field) || body[field].is_null()) {
    if (required) return InvalidArgument(field, std::string(field) + " is required");
    return std::string();
  }
  if (!body[field].is_string())
    return InvalidArgument(field, std::string(field) + " must be a string");
  return body[field].get<std::string>();
}

}  // namespace

void AddUserRoutes(Router& router, core::Users& users) {
  router.Add("POST", "/v1/orgs/{id}/users",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               for (const auto& [key, _] : body->items())
                 if (key != "email" && key != "password")
                   return ErrorResponse(InvalidArgument(key, "unknown field '" + key + "'"));
               auto email = StringField(*body, "email", true);
               if (!email.ok()) return ErrorResponse(email.status());
               auto password = StringField(*body, "password", false);
               if (!password.ok()) return ErrorResponse(password.status());
               if (body->contains("password") && password->empty())
                 return ErrorResponse(InvalidArgument(
                     "password", "password must be at least 10 characters; omit it to get one"));
               auto added = users.Add(who, p.at("id"), *email, *password);
               if (!added.ok()) return ErrorResponse(added.status());
               json out = UserJson(added->record);
               out["password"] = added->password.empty() ? json(nullptr) : json(added->password);
               return JsonResponse(201, out);
             });
  router.Add("GET", "/v1/users",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req, {"orgId"});
               if (!page.ok()) return ErrorResponse(page.status());
               auto org = req.query.find("orgId");
               auto list = users.List(who, org == req.query.end() ? "" : org->second, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, UserJson));
             });
  router.Add("DELETE", "/v1/users/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(users.Delete(who, p.at("id")).status());
             });
  router.Add("PUT", "/v1/users/{id}/password",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               for (const auto& [key, _] : body->items())
                 if (key != "password" && key != "currentPassword")
                   return ErrorResponse(InvalidArgument(key, "unknown field '" + key + "'"));
               auto password = StringField(*body, "password", true);
               if (!password.ok()) return ErrorResponse(password.status());
               auto current = StringField(*body, "currentPassword", false);
               if (!current.ok()) return ErrorResponse(current.status());
               return NoContentOrError(users.ChangePassword(who, p.at("id"), *password, *current));
             });
}

}  // namespace adapt::api
