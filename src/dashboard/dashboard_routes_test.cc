#include "dashboard/dashboard_routes.h"

#include <nlohmann/json.hpp>

#include "api/errors.h"
#include "dashboard/dashboard_assets.h"
#include "dashboard/dashboard_test_support.h"

namespace adapt::dashboard {
namespace {

using api::HttpRequest;
using api::HttpResponse;

std::string HeaderOf(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

class DashboardRoutesTest : public DashboardFixture {
 protected:
  void SetUp() override {
    DashboardFixture::SetUp();
    AddDashboardRoutes(router_, sessions_);
    router_.Add("GET", "/v1/whoami",
                [](const HttpRequest&, const api::PathParams&, const core::Principal& who) {
                  return api::JsonResponse(200, {{"org", who.org_id}});
                });
    router_.Add("POST", "/v1/things",
                [](const HttpRequest&, const api::PathParams&, const core::Principal&) {
                  return api::JsonResponse(201, {{"made", true}});
                });
  }

  HttpRequest Request(std::string method, std::string path, std::string cookie = "") {
    HttpRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    if (!cookie.empty()) r.headers["cookie"] = "theme=dark; adapt_session=" + cookie;
    return r;
  }

  // Signs in with the key and returns the cookie's value.
  std::string SignIn() {
    HttpRequest req = Request("POST", "/dashboard/session");
    req.headers["x-adapt-csrf"] = "1";
    req.body = nlohmann::json{{"apiKey", key_}}.dump();
    HttpResponse r = router_.Handle(req);
    EXPECT_EQ(r.status, 200) << r.body;
    std::string cookie = HeaderOf(r, "Set-Cookie");
    size_t start = cookie.find('=') + 1;
    return cookie.substr(start, cookie.find(';') - start);
  }

  core::Auth route_auth_{store_};
  api::Router router_{route_auth_};
};

TEST_F(DashboardRoutesTest, SignInSetsAnHttpOnlySameSiteStrictCookie) {
  HttpRequest req = Request("POST", "/dashboard/session");
  req.headers["x-adapt-csrf"] = "1";
  req.body = nlohmann::json{{"email", "ada@example.com"}, {"password", "a long password"}}.dump();
  HttpResponse r = router_.Handle(req);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string cookie = HeaderOf(r, "Set-Cookie");
  EXPECT_EQ(cookie.rfind("adapt_session=", 0), 0u) << cookie;
  EXPECT_NE(cookie.find("; HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("; SameSite=Strict"), std::string::npos);
  EXPECT_NE(cookie.find("; Path=/"), std::string::npos);
  EXPECT_EQ(cookie.find("Secure"), std::string::npos);
  req.headers["x-forwarded-proto"] = "https";
  EXPECT_NE(HeaderOf(router_.Handle(req), "Set-Cookie").find("; Secure"), std::string::npos);
}

TEST_F(DashboardRoutesTest, SignInWithoutTheCsrfHeaderOrWithAWrongKeyIsRefused) {
  HttpRequest req = Request("POST", "/dashboard/session");
  req.body = nlohmann::json{{"apiKey", key_}}.dump();
  EXPECT_EQ(router_.Handle(req).status, 403);
  req.headers["x-adapt-csrf"] = "1";
  req.body = nlohmann::json{{"apiKey", "adapt_wrong"}}.dump();
  HttpResponse r = router_.Handle(req);
  EXPECT_EQ(r.status, 401);
  EXPECT_TRUE(HeaderOf(r, "Set-Cookie").empty());
  req.body = "[1]";
  EXPECT_EQ(router_.Handle(req).status, 400);
}

TEST_F(DashboardRoutesTest, FailedPasswordsAreLimitedPerEmailThenNoPasswordIsChecked) {
  HttpRequest req = Request("POST", "/dashboard/session");
  req.headers["x-adapt-csrf"] = "1";
  req.remote = "192.0.2.7";
  req.body = nlohmann::json{{"email", "ada@example.com"}, {"password", "wrong password"}}.dump();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(router_.Handle(req).status, 401);
  req.body = nlohmann::json{{"email", "ADA@example.com"}, {"password", "a long password"}}.dump();
  HttpResponse r = router_.Handle(req);
  EXPECT_EQ(r.status, 429);
  EXPECT_TRUE(HeaderOf(r, "Set-Cookie").empty());
}

TEST_F(DashboardRoutesTest, TheCookieReadsTheApiAndChangesOnlyWithTheCsrfHeader) {
  std::string token = SignIn();
  HttpResponse read = router_.Handle(Request("GET", "/v1/whoami", token));
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_NE(read.body.find("org_acme"), std::string::npos);

  HttpRequest post = Request("POST", "/v1/things", token);
  HttpResponse refused = router_.Handle(post);
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("X-Adapt-CSRF"), std::string::npos);
  post.headers["x-adapt-csrf"] = "1";
  EXPECT_EQ(router_.Handle(post).status, 201);
}

TEST_F(DashboardRoutesTest, SigningOutEndsTheCookiesSession) {
  std::string token = SignIn();
  EXPECT_EQ(router_.Handle(Request("GET", "/dashboard/session", token)).status, 200);
  HttpRequest out = Request("DELETE", "/dashboard/session", token);
  out.headers["x-adapt-csrf"] = "1";
  HttpResponse r = router_.Handle(out);
  EXPECT_EQ(r.status, 204);
  EXPECT_NE(HeaderOf(r, "Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(router_.Handle(Request("GET", "/v1/whoami", token)).status, 401);
  EXPECT_EQ(router_.Handle(Request("GET", "/dashboard/session", token)).status, 401);
}

TEST_F(DashboardRoutesTest, AMadeUpCookieIsUnauthenticated) {
  EXPECT_EQ(router_.Handle(Request("GET", "/v1/whoami", "forged")).status, 401);
}

TEST_F(DashboardRoutesTest, TheIndexIsServedWithAStrictPolicyAndAnEtag) {
  HttpResponse r = router_.Handle(Request("GET", "/"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  const EmbeddedAsset* index = FindAsset("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(r.body, std::string(reinterpret_cast<const char*>(index->data), index->size));
  std::string csp = HeaderOf(r, "Content-Security-Policy");
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(HeaderOf(r, "X-Frame-Options"), "DENY");
  EXPECT_EQ(HeaderOf(r, "X-Content-Type-Options"), "nosniff");

  std::string etag = HeaderOf(r, "ETag");
  ASSERT_FALSE(etag.empty());
  HttpRequest again = Request("GET", "/");
  again.headers["if-none-match"] = etag;
  HttpResponse cached = router_.Handle(again);
  EXPECT_EQ(cached.status, 304);
  EXPECT_TRUE(cached.body.empty());
}

TEST_F(DashboardRoutesTest, ABrowserThatAcceptsGzipGetsTheCompressedBundle) {
  const EmbeddedAsset* bundle = FindAsset("app.js");
  ASSERT_NE(bundle, nullptr);
  ASSERT_LT(bundle->gzip_size, bundle->size / 2);
  HttpRequest req = Request("GET", "/assets/app.js");
  req.headers["accept-encoding"] = "gzip, deflate, br";
  HttpResponse r = router_.Handle(req);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(HeaderOf(r, "Content-Encoding"), "gzip");
  EXPECT_EQ(HeaderOf(r, "Vary"), "Accept-Encoding");
  EXPECT_EQ(r.body.size(), bundle->gzip_size);
  EXPECT_EQ(r.body.substr(0, 2), "\x1f\x8b");
  HttpResponse plain = router_.Handle(Request("GET", "/assets/app.js"));
  EXPECT_TRUE(HeaderOf(plain, "Content-Encoding").empty());
  EXPECT_NE(HeaderOf(plain, "ETag"), HeaderOf(r, "ETag"));
}

TEST_F(DashboardRoutesTest, EveryEmbeddedFileHasItsContentTypeAndUnknownOnesAre404) {
  for (const auto& asset : EmbeddedAssets()) {
    HttpResponse r = router_.Handle(Request("GET", std::string("/assets/") + asset.name));
    EXPECT_EQ(r.status, 200) << asset.name;
    EXPECT_EQ(r.content_type, ContentTypeFor(asset.name));
  }
  EXPECT_EQ(ContentTypeFor("app.js"), std::string("text/javascript; charset=utf-8"));
  EXPECT_EQ(ContentTypeFor("app.css"), std::string("text/css; charset=utf-8"));
  EXPECT_EQ(router_.Handle(Request("GET", "/assets/nope.js")).status, 404);
  EXPECT_EQ(router_.Handle(Request("GET", "/assets/..")).status, 404);
}

}  // namespace
}  // namespace adapt::dashboard
