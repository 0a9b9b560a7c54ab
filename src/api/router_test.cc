#include "api/router.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/ids.h"
#include "base/time.h"
#include "os/temp_dir.h"
#include "store/store.h"

namespace adapt::api {
namespace {

using nlohmann::json;

class RouterTest : public testing::Test {
 protected:
  void SetUp() override {
    auto store = store::OpenSqliteStore(dir_ + "/adapt.db");
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
    auth_ = std::make_unique<core::Auth>(*store_);

    auto org = store_->CreateOrg({NewId("org"), "acme", false, NowMillis()});
    ASSERT_TRUE(org.ok());
    org_id_ = org->id;
    key_ = "adapt_" + RandomToken(40);
    key_id_ = NewId("key");
    ASSERT_TRUE(
        store_->CreateApiKey({key_id_, org_id_, "test", Sha256Hex(key_), false, NowMillis()}).ok());

    router_ = std::make_unique<Router>(*auth_);
    router_->Add("GET", "/v1/sandboxes/{id}",
                 [this](const HttpRequest&, const PathParams& p, const core::Principal& who) {
                   ++authed_calls_;
                   HttpResponse r;
                   r.body = json({{"id", p.at("id")},
                                  {"org", who.org_id},
                                  {"key", who.key_id},
                                  {"admin", who.is_admin}})
                                .dump();
                   return r;
                 });
    router_->Add("DELETE", "/v1/sandboxes/{id}",
                 [](const HttpRequest&, const PathParams&, const core::Principal&) {
                   HttpResponse r;
                   r.status = 204;
                   return r;
                 });
    router_->Add("GET", "/v1/sandboxes/{id}/commands/{cid}",
                 [](const HttpRequest&, const PathParams& p, const core::Principal&) {
                   HttpResponse r;
                   r.body = json(p).dump();
                   return r;
                 });
    router_->AddPublic("GET", "/healthz", [this](const HttpRequest&, const PathParams& p) {
      ++public_calls_;
      HttpResponse r;
      r.body = json({{"ok", true}, {"params", p.size()}}).dump();
      return r;
    });
  }
  void TearDown() override {
    router_.reset();
    auth_.reset();
    store_.reset();
  }

  HttpRequest Request(const std::string& method, const std::string& path,
                      const std::string& key = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    if (!key.empty()) r.headers["authorization"] = "Bearer " + key;
    return r;
  }

  static json Body(const HttpResponse& r) {
    json j = json::parse(r.body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.body;
    return j;
  }

  // API.md: {"error": {"code", "message", "field"?}}.
  static void ExpectApiError(const HttpResponse& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    json j = Body(r);
    ASSERT_TRUE(j.contains("error")) << r.body;
    EXPECT_EQ(j["error"]["code"], code) << r.body;
    ASSERT_TRUE(j["error"]["message"].is_string()) << r.body;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
  }

  os::TempDir tmp_{"router-test"};
  const std::string dir_ = tmp_.path();
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<core::Auth> auth_;
  std::unique_ptr<Router> router_;
  std::string org_id_, key_, key_id_;
  int authed_calls_ = 0;
  int public_calls_ = 0;
};

TEST_F(RouterTest, MissingKeyIs401WithTheApiErrorFormat) {
  HttpResponse r = router_->Handle(Request("GET", "/v1/sandboxes/sbx_1"));
  ExpectApiError(r, 401, "unauthenticated");
  EXPECT_EQ(authed_calls_, 0);
  bool challenge = false;
  for (const auto& [k, v] : r.headers)
    challenge = challenge || (k == "WWW-Authenticate" && v == "Bearer");
  EXPECT_TRUE(challenge) << "a 401 names its scheme";
}

TEST_F(RouterTest, UnknownOrMalformedKeyIs401) {
  ExpectApiError(router_->Handle(Request("GET", "/v1/sandboxes/sbx_1", "adapt_wrong")), 401,
                 "unauthenticated");
  HttpRequest basic = Request("GET", "/v1/sandboxes/sbx_1");
  basic.headers["authorization"] = "Basic " + key_;
  ExpectApiError(router_->Handle(basic), 401, "unauthenticated");
  HttpRequest bare = Request("GET", "/v1/sandboxes/sbx_1");
  bare.headers["authorization"] = "Bearer ";
  ExpectApiError(router_->Handle(bare), 401, "unauthenticated");
  EXPECT_EQ(authed_calls_, 0);
}

// A proxy in front reads /v1%2Fsandboxes%2Fsbx_abc as one segment; adaptd must not route it
// as /v1/sandboxes/sbx_abc. An escaped slash inside a parameter stays in that parameter.
TEST_F(RouterTest, AnEscapedSlashStaysInsideItsSegment) {
  HttpRequest folded = Request("GET", "/v1/sandboxes/sbx_abc", key_);
  folded.target = "/v1%2Fsandboxes%2fsbx_abc";
  ExpectApiError(router_->Handle(folded), 404, "not_found");
  HttpRequest in_param = Request("GET", "/v1/sandboxes/a/b", key_);
  in_param.target = "/v1/sandboxes/a%2Fb?x=1";
  HttpResponse r = router_->Handle(in_param);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["id"], "a/b");
  HttpRequest escaped = Request("GET", "/v1/sandboxes/sbx_abc", key_);
  escaped.target = "/v1/%73andboxes/sbx_abc";
  EXPECT_EQ(router_->Handle(escaped).status, 200) << "other escapes still decode";
  EXPECT_EQ(authed_calls_, 2);
}

TEST_F(RouterTest, ValidKeyReachesTheHandlerWithItsPrincipalAndPathParams) {
  HttpResponse r = router_->Handle(Request("GET", "/v1/sandboxes/sbx_abc", key_));
  EXPECT_EQ(r.status, 200) << r.body;
  json j = Body(r);
  EXPECT_EQ(j["id"], "sbx_abc");
  EXPECT_EQ(j["org"], org_id_);
  EXPECT_EQ(j["key"], key_id_);
  EXPECT_EQ(j["admin"], false);
  EXPECT_EQ(authed_calls_, 1);
}

TEST_F(RouterTest, BearerSchemeIsCaseInsensitive) {
  HttpRequest r = Request("GET", "/v1/sandboxes/sbx_abc");
  r.headers["authorization"] = "bearer " + key_;
  EXPECT_EQ(router_->Handle(r).status, 200);
  EXPECT_EQ(BearerKey(r), key_);
  EXPECT_EQ(BearerKey(Request("GET", "/")), "");
}

TEST_F(RouterTest, SeveralPathParamsAreExtracted) {
  HttpResponse r = router_->Handle(Request("GET", "/v1/sandboxes/sbx_a/commands/cmd_b", key_));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"id", "sbx_a"}, {"cid", "cmd_b"}}));
}

TEST_F(RouterTest, TrailingAndDoubleSlashesMatchTheSameRoute) {
  EXPECT_EQ(router_->Handle(Request("GET", "/v1/sandboxes/sbx_abc/", key_)).status, 200);
  EXPECT_EQ(router_->Handle(Request("GET", "//v1//sandboxes/sbx_abc", key_)).status, 200);
}

TEST_F(RouterTest, UnknownPathIs404) {
  ExpectApiError(router_->Handle(Request("GET", "/v1/nothing", key_)), 404, "not_found");
  ExpectApiError(router_->Handle(Request("GET", "/v1/sandboxes", key_)), 404, "not_found");
  ExpectApiError(router_->Handle(Request("GET", "/v1/sandboxes/a/b", key_)), 404, "not_found");
  // Unknown paths answer 404 before any key is asked for.
  ExpectApiError(router_->Handle(Request("GET", "/v1/nothing")), 404, "not_found");
}

TEST_F(RouterTest, KnownPathWithAnotherMethodIs405) {
  HttpResponse r = router_->Handle(Request("POST", "/v1/sandboxes/sbx_abc", key_));
  ExpectApiError(r, 405, "method_not_allowed");
  EXPECT_EQ(authed_calls_, 0);
  ExpectApiError(router_->Handle(Request("PUT", "/healthz")), 405, "method_not_allowed");
  // Methods are case-sensitive, as HTTP says.
  ExpectApiError(router_->Handle(Request("get", "/healthz")), 405, "method_not_allowed");
}

TEST_F(RouterTest, OtherMethodOnTheSamePathReachesItsOwnHandler) {
  EXPECT_EQ(router_->Handle(Request("DELETE", "/v1/sandboxes/sbx_abc", key_)).status, 204);
  EXPECT_EQ(router_->Handle(Request("DELETE", "/v1/sandboxes/sbx_abc")).status, 401);
}

TEST_F(RouterTest, PublicRouteNeedsNoKey) {
  HttpResponse r = router_->Handle(Request("GET", "/healthz"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["ok"], true);
  EXPECT_EQ(Body(r)["params"], 0);
  // A bad key on a public route is not an error either.
  EXPECT_EQ(router_->Handle(Request("GET", "/healthz", "adapt_wrong")).status, 200);
  EXPECT_EQ(public_calls_, 2);
}

TEST_F(RouterTest, AdminKeyFromBootstrapIsAnAdminPrincipal) {
  ASSERT_TRUE(auth_->Bootstrap(dir_ + "/admin.key").ok());
  auto text = std::filesystem::file_size(dir_ + "/admin.key");
  ASSERT_GT(text, 0u);
  std::ifstream in(dir_ + "/admin.key");
  std::string admin_key;
  std::getline(in, admin_key);
  HttpResponse r = router_->Handle(Request("GET", "/v1/sandboxes/sbx_abc", admin_key));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["admin"], true);
}

TEST_F(RouterTest, AnUnregisteredAccountMayReadAndRegisterButNotChangeAnything) {
  auto org = store_->CreateOrg({NewId("org"), "signed-up", false, NowMillis(), false});
  ASSERT_TRUE(org.ok());
  std::string key = "adapt_" + RandomToken(40);
  ASSERT_TRUE(
      store_->CreateApiKey({NewId("key"), org->id, "k", Sha256Hex(key), false, NowMillis()}).ok());
  router_->Add("POST", "/v1/account/register",
               [](const HttpRequest&, const PathParams&, const core::Principal&) {
                 HttpResponse r;
                 r.body = "{}";
                 return r;
               });

  EXPECT_EQ(router_->Handle(Request("GET", "/v1/sandboxes/sbx_1", key)).status, 200);
  EXPECT_EQ(router_->Handle(Request("POST", "/v1/account/register", key)).status, 200);
  HttpResponse refused = router_->Handle(Request("DELETE", "/v1/sandboxes/sbx_1", key));
  ExpectApiError(refused, 403, "permission_denied");
  EXPECT_EQ(Body(refused)["error"]["message"],
            "this account is not registered yet: call POST /v1/account/register first");
  // An operator-made organization is registered from the start.
  EXPECT_EQ(router_->Handle(Request("DELETE", "/v1/sandboxes/sbx_1", key_)).status, 204);
}

}  // namespace
}  // namespace adapt::api
