// Metering's integer arithmetic: compute time read from status events, and costs in
// nano-units on a plan's prices.
#include "core/usage_arithmetic.h"

#include <gtest/gtest.h>

#include <limits>

namespace adapt::core {
namespace {

std::vector<store::EventRecord> Events(
    std::initializer_list<std::pair<const char*, int64_t>> changes) {
  std::vector<store::EventRecord> out;
  int64_t seq = 0;
  for (const auto& [status, at] : changes) out.push_back({++seq, "org_a", "sbx_a", status, at});
  return out;
}

TEST(ComputeMillisBetween, CountsProvisioningAndRunningInsideThePeriodOnly) {
  auto events = Events({{"provisioning", 1000}, {"running", 1500}, {"hibernated", 4000}});
  EXPECT_EQ(ComputeMillisBetween(events, 0, 10000), 3000);
  EXPECT_EQ(ComputeMillisBetween(events, 2000, 3000), 1000);
  EXPECT_EQ(ComputeMillisBetween(events, 4000, 9000), 0);
  EXPECT_EQ(ComputeMillisBetween(events, 3000, 3000), 0);
}

TEST(ComputeMillisBetween, AStillRunningSandboxCountsUpToTheEndOfThePeriod) {
  auto events = Events({{"provisioning", 1000}, {"running", 1200}});
  EXPECT_EQ(ComputeMillisBetween(events, 5000, 35000), 30000);
}

TEST(ComputeMillisBetween, StopsAndStartsAddUp) {
  auto events = Events({{"provisioning", 0},
                        {"running", 100},
                        {"stopping", 1000},
                        {"hibernated", 1300},
                        {"provisioning", 5000},
                        {"running", 5100},
                        {"deleting", 6000},
                        {"deleted", 6100}});
  EXPECT_EQ(ComputeMillisBetween(events, 0, 10000), 2000);
  EXPECT_EQ(ComputeMillisBetween(events, 500, 5500), 1000);
}

store::PlanRecord Priced(int64_t cpu_second, int64_t gib_second, int64_t gib_month) {
  store::PlanRecord p;
  p.cpu_second_nanos = cpu_second;
  p.memory_gib_second_nanos = gib_second;
  p.storage_gib_month_nanos = gib_month;
  return p;
}

TEST(UsageCostNanos, PricesCpuSecondsGibSecondsAndGibMonthsExactly) {
  // 2 cpus for 30 s at 1,000 nanos per cpu-second: 60,000.
  EXPECT_EQ(UsageCostNanos({60'000, 0, 0}, Priced(1000, 0, 0)), 60'000);
  // 512 MiB for 30 s = 15 GiB-seconds at 100 nanos: 1,500.
  EXPECT_EQ(UsageCostNanos({0, 512LL * 30'000, 0}, Priced(0, 100, 0)), 1500);
  // 1 GiB for a 30-day month at 2,000,000,000 nanos per GiB-month.
  EXPECT_EQ(UsageCostNanos({0, 0, 1024 * kStorageMonthMillis}, Priced(0, 0, 2'000'000'000)),
            2'000'000'000);
  // The parts are summed before rounding: 0.5 + 0.5 nanos is 1, not 0.
  EXPECT_EQ(UsageCostNanos({1, 512, 0}, Priced(500, 1000, 0)), 1);
}

TEST(UsageCostNanos, RoundsDownOncePerEntry) {
  EXPECT_EQ(UsageCostNanos({999, 0, 0}, Priced(1, 0, 0)), 0);
  EXPECT_EQ(UsageCostNanos({1999, 0, 0}, Priced(1, 0, 0)), 1);
}

TEST(UsageCostNanos, LargeQuantitiesDoNotOverflowAndSaturate) {
  // A year of 32 cpus at 1,000,000 nanos per cpu-second: 1.0e15 nanos, beyond 64-bit products.
  int64_t year_ms = 365LL * 86'400'000;
  EXPECT_EQ(UsageCostNanos({32 * year_ms, 0, 0}, Priced(1'000'000, 0, 0)),
            32LL * 365 * 86'400 * 1'000'000);
  int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(UsageCostNanos({max, 0, 0}, Priced(max, 0, 0)), max);
}

TEST(PlanHasPrices, AnyPriceAboveZero) {
  EXPECT_FALSE(PlanHasPrices(Priced(0, 0, 0)));
  EXPECT_TRUE(PlanHasPrices(Priced(0, 1, 0)));
  store::PlanRecord gpu;
  gpu.gpu_second_nanos = 1;
  EXPECT_TRUE(PlanHasPrices(gpu));
}

}  // namespace
}  // namespace adapt::core
