#include "core/limit_alerts.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace adapt::core {
namespace {

TEST(LimitObservations, EachLimitSetAboveZeroIsObservedAtEightyAndAHundredPercent) {
  store::PlanRecord plan;
  plan.cpu = 8;
  plan.memory_mib = 0;  // allows nothing: no alert to give
  plan.persistent_storage_gib = 2;
  plan.queued_jobs = 5;
  store::SandboxLimits sandboxes;
  sandboxes.sandboxes = 10;
  store::OrgUsageRecord usage;
  usage.sandboxes = 9;
  usage.cpu = 7;
  usage.persistent_storage_mib = 1024;
  usage.queued_jobs = 5;
  std::map<std::pair<std::string, int>, store::LimitAlertRecord> seen;
  for (const auto& o : LimitObservations(plan, sandboxes, usage, 42)) {
    EXPECT_EQ(o.at, 42);
    seen[{o.limit, o.percent}] = o;
  }
  auto at = [&](const std::string& limit, int percent) { return seen[{limit, percent}]; };
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ((seen.count({"memory_mib", 80})), 0u);
  EXPECT_EQ((seen.count({"endpoints", 80})), 0u);
  EXPECT_EQ(at("concurrent_sandboxes", 100).limit_value, 10);
  EXPECT_EQ(at("persistent_storage_gib", 80).limit_value, 2048);  // MiB beside MiB used
  EXPECT_EQ(at("persistent_storage_gib", 80).used, 1024);
  EXPECT_TRUE(store::LimitReached(at("cpu", 80)));  // 7 of 8
  EXPECT_FALSE(store::LimitReached(at("cpu", 100)));
  EXPECT_TRUE(store::LimitReached(at("queued_jobs", 100)));
  EXPECT_FALSE(store::LimitReached(at("persistent_storage_gib", 80)));  // 50%
}

}  // namespace
}  // namespace adapt::core
