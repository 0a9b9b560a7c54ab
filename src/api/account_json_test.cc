#include "api/account_json.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

using nlohmann::json;

TEST(PlanJson, RoundTripsLimitsAndPricesWithNullMeaningNoLimit) {
  auto plan = PlanFromJson(json::parse(R"({"name": "Small",
      "limits": {"concurrentSandboxes": 10, "cpu": 8, "memoryMiB": 8192, "gpus": 0,
                 "endpoints": null},
      "prices": {"cpuSecondNanos": 10000}})"),
                           "small");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->id, "small");
  EXPECT_EQ(plan->concurrent_sandboxes, 10);
  EXPECT_EQ(plan->gpus, 0);
  EXPECT_FALSE(plan->endpoints.has_value());
  EXPECT_FALSE(plan->max_run_seconds.has_value());
  EXPECT_EQ(plan->cpu_second_nanos, 10000);
  json out = PlanToJson(*plan);
  EXPECT_EQ(out["limits"]["memoryMiB"], 8192);
  EXPECT_TRUE(out["limits"]["endpoints"].is_null());
  EXPECT_EQ(out["prices"]["gpuSecondNanos"], 0);
  auto again = PlanFromJson(out, "small");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->memory_mib, 8192);
}

TEST(PlanJson, BadValuesNameTheirFieldInRestWords) {
  struct Case {
    const char* body;
    const char* field;
  };
  for (const Case& c :
       {Case{R"({"limits": {"cpu": -1}})", "limits.cpu"},
        Case{R"({"limits": {"memoryMiB": "big"}})", "limits.memoryMiB"},
        Case{R"({"limits": {"cpus": 4}})", "limits.cpus"},
        Case{R"({"prices": {"cpuSecondNanos": 1.5}})", "prices.cpuSecondNanos"},
        Case{R"({"prices": {"gpuSecondNanos": -3}})", "prices.gpuSecondNanos"},
        Case{R"({"id": "other"})", "id"}, Case{R"({"limits": [1]})", "limits"},
        Case{R"({"colour": "red"})", "colour"}, Case{R"({"updatedAt": 123})", "updatedAt"}}) {
    auto plan = PlanFromJson(json::parse(c.body), "small");
    ASSERT_FALSE(plan.ok()) << c.body;
    EXPECT_EQ(plan.status().code(), Code::kInvalidArgument) << c.body;
    EXPECT_EQ(plan.status().field(), c.field) << c.body << ": " << plan.status().message();
  }
  EXPECT_FALSE(PlanFromJson(json::object(), "Bad Id!").ok());
}

TEST(PlanJson, PlansFileNeedsAListOfPlansEachWithAnId) {
  auto plans = PlansFileFromJson(R"({"plans": [{"id": "pro", "limits": {"cpu": 64}}]})");
  ASSERT_TRUE(plans.ok()) << plans.status().message();
  ASSERT_EQ(plans->size(), 1u);
  EXPECT_EQ((*plans)[0].name, "pro");
  EXPECT_FALSE(PlansFileFromJson(R"({"plans": [{"limits": {}}]})").ok());
  EXPECT_FALSE(PlansFileFromJson("not json").ok());
  EXPECT_FALSE(PlansFileFromJson(R"([])").ok());
  auto bad = PlansFileFromJson(R"({"plans": [{"id": "a"}, {"id": "b", "limits": {"gpus": -1}}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("plans[1]"), std::string::npos);
}

TEST(AlertEventJson, CreditAndLimitAlertsInRestWords) {
  store::EventRecord credit =
      store::AlertEvent(store::AccountAlertRecord{0, "org_a", "balance_100", 5000, 5100, 0});
  json c = AlertEventToJson(credit);
  EXPECT_EQ(c["type"], "credit_100");
  EXPECT_TRUE(c["limit"].is_null());
  EXPECT_EQ(c["value"], 5000);
  EXPECT_EQ(c["used"], 5100);
  EXPECT_EQ(c["at"], "1970-01-01T00:00:00.000Z");
  store::EventRecord limit = store::AlertEvent(
      store::LimitAlertRecord{0, "org_a", "persistent_storage_gib", 80, 1024, 820, 0});
  json l = AlertEventToJson(limit);
  EXPECT_EQ(l["type"], "limit_80");
  EXPECT_EQ(l["limit"], "persistentStorageGiB");
  EXPECT_EQ(l["value"], 1024);
  EXPECT_EQ(l["used"], 820);
  EXPECT_EQ(store::AlertEvent(store::AccountAlertRecord{0, "o", "balance_80", 1, 1, 0}).status,
            "credit_80");
}

}  // namespace
}  // namespace adapt::api
