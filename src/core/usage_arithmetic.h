// The integer arithmetic of metering: how long a sandbox held compute in a period (from its
// status events) and what a period's usage costs on a plan. No floating point: quantities are
// exact integers (cpus x milliseconds, MiB x milliseconds) and a cost is nano-units, rounded
// down once per ledger entry.
#pragma once

#include <cstdint>
#include <vector>

#include "store/account_store.h"
#include "store/records.h"

namespace adapt::core {

// Milliseconds of [from, to) during which the sandbox held compute (provisioning or running),
// read from its status events (oldest first).
int64_t ComputeMillisBetween(const std::vector<store::EventRecord>& events, int64_t from,
                             int64_t to);

struct UsageQuantities {
  int64_t cpu_millis = 0;          // cpus reserved x milliseconds
  int64_t memory_mib_millis = 0;   // MiB reserved x milliseconds
  int64_t storage_mib_millis = 0;  // MiB allocated x milliseconds
  int64_t gpu_millis = 0;          // GPUs reserved x milliseconds
};

// A month of storage, for per-GiB-month prices: 30 days.
inline constexpr int64_t kStorageMonthMillis = 30LL * 86'400'000;

// The cost of `q` on `plan`'s prices, in nano-units, rounded down (saturates at INT64_MAX).
int64_t UsageCostNanos(const UsageQuantities& q, const store::PlanRecord& plan);

// True when any of the plan's prices is above 0: only then does a used-up balance stop
// anything.
bool PlanHasPrices(const store::PlanRecord& plan);

}  // namespace adapt::core
