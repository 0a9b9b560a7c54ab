#include "dashboard/signup_routes.h"

#include "api/errors.h"
#include "base/json_parse.h"

namespace adapt::dashboard {
namespace {

using api::HttpRequest;
using api::HttpResponse;
using api::PathParams;
using nlohmann::json;

HttpResponse SignUp(core::Users& users, mcp::RegistrationLimit& limit, bool allow_signup,
                    const HttpRequest& req) {
  // A header a cross-site form cannot send: another site cannot make accounts from a
  // visitor's address.
  if (req.Header("x-adapt-csrf") != "1")
    return api::ErrorResponse(
        Status(Code::kPermissionDenied, "the dashboard's requests must send X-Adapt-CSRF: 1"));
  if (!allow_signup)
    return api::ErrorResponse(
        Status(Code::kPermissionDenied,
               "this server does not let anyone create an account; ask its operator"));
  auto body = ParseJson(req.body, "the request body");
  if (!body.ok() || !body->is_object())
    return api::ErrorResponse(InvalidArgument("body", "the body must be a JSON object"));
  for (const auto& [key, _] : body->items())
    if (key != "email" && key != "password")
      return api::ErrorResponse(InvalidArgument(key, "unknown field '" + key + "'"));
  for (const char* field : {"email", "password"}) {
    auto it = body->find(field);
    if (it == body->end() || !it->is_string())
      return api::ErrorResponse(
          InvalidArgument(field, std::string(field) + " is required and must be a string"));
  }
  const std::string email = (*body)["email"].get<std::string>();
  const std::string password = (*body)["password"].get<std::string>();
  // Bad input is refused before it spends one of the address's accounts.
  if (auto normalized = core::NormalizeEmail(email); !normalized.ok())
    return api::ErrorResponse(normalized.status());
  if (Status st = core::CheckPassword(password); !st.ok()) return api::ErrorResponse(st);
  if (int64_t wait = limit.Take(req.remote); wait > 0) {
    HttpResponse r = api::ErrorResponse(Status(Code::kResourceExhausted,
                                               "too many accounts were created from this address; "
                                               "try again in " +
                                                   std::to_string((wait + 59) / 60) + " minutes"));
    r.headers.emplace_back("Retry-After", std::to_string(wait));
    return r;
  }
  auto who = users.SignUp(email, password);
  if (!who.ok()) return api::ErrorResponse(who.status());
  HttpResponse r = api::JsonResponse(
      201, {{"orgId", who->org_id}, {"userId", who->key_id}, {"registered", who->registered}});
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace

void AddSignUpRoutes(api::Router& router, core::Users& users, mcp::RegistrationLimit& limit,
                     bool allow_signup) {
  router.AddPublic("GET", "/dashboard/signup",
                   [allow_signup](const HttpRequest&, const PathParams&) {
                     return api::JsonResponse(200, {{"allowSignup", allow_signup}});
                   });
  router.AddPublic("POST", "/dashboard/signup",
                   [&users, &limit, allow_signup](const HttpRequest& req, const PathParams&) {
                     return SignUp(users, limit, allow_signup, req);
                   });
}

}  // namespace adapt::dashboard
