#include "dashboard/dashboard_routes.h"

#include "api/errors.h"
#include "api/request_cookie.h"
#include "base/json_parse.h"
#include "dashboard/dashboard_assets.h"
#include "mcp/sign_in_limit.h"

namespace adapt::dashboard {
namespace {

using api::HttpRequest;
using api::HttpResponse;
using api::PathParams;
using nlohmann::json;

// No inline script or style, nothing from another origin, never framed.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

void AddPageHeaders(HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
}

bool AcceptsGzip(const HttpRequest& req) {
  return req.Header("accept-encoding").find("gzip") != std::string::npos;
}

HttpResponse ServeAsset(const HttpRequest& req, std::string_view name) {
  const EmbeddedAsset* asset = FindAsset(name);
  if (!asset) return api::ErrorResponse(NotFound("no such dashboard file: " + std::string(name)));
  bool gzip = AcceptsGzip(req) && asset->gzip_size < asset->size;
  // Each encoding is its own representation, with its own tag.
  std::string etag = "\"" + std::string(asset->sha256).substr(0, 32) + (gzip ? "-gzip" : "") + "\"";
  HttpResponse r;
  AddPageHeaders(r);
  r.headers.emplace_back("ETag", etag);
  r.headers.emplace_back("Vary", "Accept-Encoding");
  // Revalidated each time: a new adaptd serves its own bundle at once.
  r.headers.emplace_back("Cache-Control", "no-cache");
  if (req.Header("if-none-match") == etag) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  r.content_type = ContentTypeFor(asset->name);
  if (gzip) {
    r.headers.emplace_back("Content-Encoding", "gzip");
    r.body.assign(reinterpret_cast<const char*>(asset->gzip), asset->gzip_size);
  } else {
    r.body.assign(reinterpret_cast<const char*>(asset->data), asset->size);
  }
  return r;
}

// Over HTTPS (a TLS proxy in front says so) the cookie is Secure.
bool OverHttps(const HttpRequest& req) { return req.Header("x-forwarded-proto") == "https"; }

std::string SessionCookie(const HttpRequest& req, const std::string& value, int64_t max_age_s) {
  std::string c = std::string(kSessionCookie) + "=" + value +
                  "; Path=/; Max-Age=" + std::to_string(max_age_s) + "; HttpOnly; SameSite=Strict";
  if (OverHttps(req)) c += "; Secure";
  return c;
}

Status RequireCsrfHeader(const HttpRequest& req) {
  if (req.Header("x-adapt-csrf") == "1") return Status::Ok();
  return Status(Code::kPermissionDenied, "the dashboard's requests must send X-Adapt-CSRF: 1");
}

json SessionJson(const core::Principal& who) {
  return {{"orgId", who.org_id}, {"registered", who.registered}};
}

// Passwords are limited as on the OAuth page (mcp/sign_in_limit.h): failures per email and per
// address, then 429 without checking any password. API keys are too long to guess.
Result<OpenedSession> SignInWithPassword(DashboardSessions& sessions, mcp::SignInLimit& limit,
                                         const HttpRequest& req, const std::string& email,
                                         const std::string& password) {
  auto normalized = core::NormalizeEmail(email);
  std::string key = normalized.ok() ? *normalized : email.substr(0, 320);
  if (int64_t wait = limit.WaitSeconds(key, req.remote); wait > 0)
    return Status(Code::kResourceExhausted,
                  "too many failed sign-ins: try again in " + std::to_string(wait) + " seconds");
  auto opened = sessions.SignInWithPassword(email, password);
  if (!opened.ok() && opened.status().code() == Code::kUnauthenticated)
    limit.Failed(key, req.remote);
  return opened;
}

HttpResponse SignIn(DashboardSessions& sessions, mcp::SignInLimit& limit, const HttpRequest& req) {
  if (Status st = RequireCsrfHeader(req); !st.ok()) return api::ErrorResponse(st);
  auto body = ParseJson(req.body, "the request body");
  if (!body.ok() || !body->is_object())
    return api::ErrorResponse(InvalidArgument("body", "the body must be a JSON object"));
  auto text = [&](const char* field) {
    auto it = body->find(field);
    return it != body->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Result<OpenedSession> opened = Status(Code::kInternal, "");
  if (body->contains("apiKey")) {
    opened = sessions.SignInWithKey(text("apiKey"));
  } else if (body->contains("email")) {
    opened = SignInWithPassword(sessions, limit, req, text("email"), text("password"));
  } else {
    return api::ErrorResponse(
        InvalidArgument("body", "sign in with {\"email\", \"password\"} or {\"apiKey\"}"));
  }
  if (!opened.ok()) return api::ErrorResponse(opened.status());
  json out = SessionJson(opened->who);
  out["expiresInSeconds"] = DashboardSessions::kLifetimeMillis / 1000;
  HttpResponse r = api::JsonResponse(200, out);
  r.headers.emplace_back(
      "Set-Cookie", SessionCookie(req, opened->token, DashboardSessions::kLifetimeMillis / 1000));
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace

void AddDashboardRoutes(api::Router& router, DashboardSessions& sessions) {
  router.SetSessionCookie(kSessionCookie,
                          [&sessions](const std::string& token) { return sessions.Find(token); });
  router.AddPublic("GET", "/", [](const HttpRequest& req, const PathParams&) {
    return ServeAsset(req, "index.html");
  });
  router.AddPublic("GET", "/assets/{name}", [](const HttpRequest& req, const PathParams& p) {
    return ServeAsset(req, p.at("name"));
  });
  auto limit = std::make_shared<mcp::SignInLimit>();
  router.AddPublic("POST", "/dashboard/session",
                   [&sessions, limit](const HttpRequest& req, const PathParams&) {
                     return SignIn(sessions, *limit, req);
                   });
  router.AddPublic("GET", "/dashboard/session",
                   [&sessions](const HttpRequest& req, const PathParams&) {
                     auto who = sessions.Find(api::CookieValue(req, kSessionCookie));
                     if (!who.ok()) return api::ErrorResponse(who.status());
                     return api::JsonResponse(200, SessionJson(*who));
                   });
  router.AddPublic(
      "DELETE", "/dashboard/session", [&sessions](const HttpRequest& req, const PathParams&) {
        if (Status st = RequireCsrfHeader(req); !st.ok()) return api::ErrorResponse(st);
        if (Status st = sessions.SignOut(api::CookieValue(req, kSessionCookie)); !st.ok())
          return api::ErrorResponse(st);
        HttpResponse r;
        r.status = 204;
        r.content_type.clear();
        r.headers.emplace_back("Set-Cookie", SessionCookie(req, "", 0));
        return r;
      });
}

}  // namespace adapt::dashboard
