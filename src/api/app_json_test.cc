// The rollback body of POST /v1/apps/{id}/rollback: releaseId and waitSeconds, nothing else,
// and waitSeconds within the deploy's bounds and with its default; the deploy body's readiness
// settings and the release's answer of them.
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

TEST(DeployJson, TakesTheReadinessPeriodAndThresholdWithTheirDefaults) {
  json body = {{"sandboxId", "sbx_1"}, {"startCommand", "serve"}, {"port", 8000}};
  auto plain = DeployAppFromJson(body);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->readiness_period_seconds, 5);
  EXPECT_EQ(plain->readiness_failure_threshold, 3);
  body["readinessPeriodSeconds"] = 1;
  body["readinessFailureThreshold"] = 10;
  auto set = DeployAppFromJson(body);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->readiness_period_seconds, 1);
  EXPECT_EQ(set->readiness_failure_threshold, 10);
  // Bounds are the core's (AppService::Deploy); the names it gives are REST's.
  EXPECT_EQ(RestAppFields()("readiness_period_seconds"), "readinessPeriodSeconds");
  EXPECT_EQ(RestAppFields()("readiness_failure_threshold"), "readinessFailureThreshold");
  for (const char* field : {"readinessPeriodSeconds", "readinessFailureThreshold"}) {
    json bad = body;
    bad[field] = "5";
    Status st = DeployAppFromJson(bad).status();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << field;
    EXPECT_EQ(st.field(), field);
  }
}

TEST(DeployJson, AReleaseShowsItsReadinessPeriodAndThreshold) {
  core::AppReleaseView release;
  release.readiness_period_seconds = 2;
  release.readiness_failure_threshold = 7;
  json out = AppReleaseToJson(release);
  EXPECT_EQ(out["readinessPeriodSeconds"], 2);
  EXPECT_EQ(out["readinessFailureThreshold"], 7);
}

}  // namespace
}  // namespace adapt::api
