// /dashboard/signup: off answers 403 and makes nothing; on, an account is made once, bad input
// is refused before it spends the address's budget, and the budget is per address.
#include "dashboard/signup_routes.h"

#include <nlohmann/json.hpp>

#include "dashboard/dashboard_test_support.h"

namespace adapt::dashboard {
namespace {

using api::HttpRequest;
using api::HttpResponse;

class SignUpRoutesTest : public DashboardFixture {
 protected:
  HttpResponse Post(api::Router& router, const nlohmann::json& body,
                    const std::string& remote = "192.0.2.7", bool csrf = true) {
    HttpRequest r;
    r.method = "POST";
    r.path = "/dashboard/signup";
    r.remote = remote;
    if (csrf) r.headers["x-adapt-csrf"] = "1";
    r.body = body.dump();
    return router.Handle(r);
  }
  bool Enabled(api::Router& router) {
    HttpRequest r;
    r.method = "GET";
    r.path = "/dashboard/signup";
    HttpResponse got = router.Handle(r);
    EXPECT_EQ(got.status, 200);
    return nlohmann::json::parse(got.body)["allowSignup"].get<bool>();
  }

  core::Auth route_auth_{store_};
  mcp::RegistrationLimit limit_{{3, std::chrono::seconds(20 * 60), 100}};
};

TEST_F(SignUpRoutesTest, OffRefusesAndMakesNothing) {
  api::Router router(route_auth_);
  AddSignUpRoutes(router, users_, limit_, false);
  EXPECT_FALSE(Enabled(router));
  HttpResponse r = Post(router, {{"email", "new@example.com"}, {"password", "a long password"}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_FALSE(store_.FindUserByEmail("new@example.com").ok());
}

TEST_F(SignUpRoutesTest, OnMakesAnUnregisteredOrganizationWithTheUser) {
  api::Router router(route_auth_);
  AddSignUpRoutes(router, users_, limit_, true);
  EXPECT_TRUE(Enabled(router));
  HttpResponse r = Post(router, {{"email", " New@Example.com"}, {"password", "a long password"}});
  ASSERT_EQ(r.status, 201) << r.body;
  auto body = nlohmann::json::parse(r.body);
  EXPECT_FALSE(body["registered"].get<bool>());
  auto user = store_.FindUserByEmail("new@example.com");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(user->org_id, body["orgId"].get<std::string>());
  auto org = store_.GetOrg(user->org_id);
  ASSERT_TRUE(org.ok());
  EXPECT_FALSE(org->registered);
  // The person signs in with what they chose.
  EXPECT_TRUE(sessions_.SignInWithPassword("new@example.com", "a long password").ok());
  // The same email again: 409.
  EXPECT_EQ(Post(router, {{"email", "new@example.com"}, {"password", "another password"}}).status,
            409);
}

TEST_F(SignUpRoutesTest, BadInputIsRefusedWithoutSpendingTheBudget) {
  api::Router router(route_auth_);
  AddSignUpRoutes(router, users_, limit_, true);
  EXPECT_EQ(Post(router, {{"email", "x@example.com"}, {"password", "a long password"}}, "192.0.2.1",
                 false)
                .status,
            403);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Post(router, {{"email", "not an email"}, {"password", "a long password"}}).status,
              400);
    EXPECT_EQ(Post(router, {{"email", "a@example.com"}, {"password", "short"}}).status, 400);
    EXPECT_EQ(Post(router, {{"email", "a@example.com"}}).status, 400);
    EXPECT_EQ(Post(router, {{"email", 5}, {"password", "a long password"}}).status, 400);
    EXPECT_EQ(Post(router, {{"email", "a@example.com"}, {"password", "a long password"}, {"x", 1}})
                  .status,
              400);
  }
  // The three accounts the address may make are still there; the fourth waits.
  for (int i = 0; i < 3; ++i) {
    HttpResponse r = Post(router, {{"email", "p" + std::to_string(i) + "@example.com"},
                                   {"password", "a long password"}});
    EXPECT_EQ(r.status, 201) << r.body;
  }
  HttpResponse limited =
      Post(router, {{"email", "p9@example.com"}, {"password", "a long password"}});
  EXPECT_EQ(limited.status, 429);
  EXPECT_FALSE(store_.FindUserByEmail("p9@example.com").ok());
  // Another address is not held back.
  EXPECT_EQ(
      Post(router, {{"email", "q@example.com"}, {"password", "a long password"}}, "198.51.100.9")
          .status,
      201);
}

}  // namespace
}  // namespace adapt::dashboard
