// The rollback body of POST /v1/apps/{id}/rollback: releaseId and waitSeconds, nothing else,
// and waitSeconds within the deploy's bounds and with its default.
#include "api/app_json.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

using nlohmann::json;

TEST(RollbackJson, TakesAReleaseAndAWaitWithTheDeploysDefault) {
  auto release = RollbackFromJson(json::parse(R"({"releaseId": "rel_1", "waitSeconds": 0})"));
  ASSERT_TRUE(release.ok()) << release.status().message();
  EXPECT_EQ(*release, "rel_1");
  auto wait = DeployWaitFromJson(json::parse(R"({"releaseId": "rel_1", "waitSeconds": 0})"));
  ASSERT_TRUE(wait.ok()) << wait.status().message();
  EXPECT_EQ(*wait, 0);
  auto empty = RollbackFromJson(json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");  // the release before the current one
  auto fallback = DeployWaitFromJson(json::object());
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(*fallback, kDefaultDeployWaitSeconds);
}

TEST(RollbackJson, BadFieldsAreNamed) {
  struct Case {
    const char* body;
    const char* field;
  };
  for (const Case& c :
       {Case{R"({"release": "rel_1"})", "release"}, Case{R"({"releaseId": 7})", "releaseId"},
        Case{R"({"waitSeconds": -1})", "waitSeconds"},
        Case{R"({"waitSeconds": 601})", "waitSeconds"},
        Case{R"({"waitSeconds": "x"})", "waitSeconds"}}) {
    json body = json::parse(c.body);
    Status st = RollbackFromJson(body).status();
    if (st.ok()) st = DeployWaitFromJson(body).status();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << c.body;
    EXPECT_EQ(st.field(), c.field) << c.body;
  }
  EXPECT_EQ(RollbackFromJson(json::array()).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace adapt::api
