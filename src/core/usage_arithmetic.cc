#include "core/usage_arithmetic.h"

#include <algorithm>
#include <limits>
#include <string>

namespace adapt::core {
namespace {

// The statuses that reserve cpu and memory (as the store's limit checks count them).
bool HoldsCompute(const std::string& status) {
  return status == "provisioning" || status == "running";
}

}  // namespace

int64_t ComputeMillisBetween(const std::vector<store::EventRecord>& events, int64_t from,
                             int64_t to) {
  if (to <= from) return 0;
  int64_t total = 0;
  bool on = false;
  int64_t since = 0;
  auto close = [&](int64_t at) {
    int64_t a = std::max(since, from), b = std::min(at, to);
    if (b > a) total += b - a;
  };
  for (const auto& e : events) {
    bool now_on = HoldsCompute(e.status);
    if (on && !now_on) close(e.at);
    if (!on && now_on) since = e.at;
    on = now_on;
  }
  if (on) close(to);
  return total;
}

int64_t UsageCostNanos(const UsageQuantities& q, const store::PlanRecord& plan) {
  // Each product fits in 128 bits (both factors are below 2^63). The whole parts are summed,
  // and the remainders over one common denominator (milliseconds x MiB-per-GiB x
  // seconds-per-month), so that an entry is rounded down once, not once per part.
  using Wide = __int128;
  constexpr Wide kMonthSeconds = kStorageMonthMillis / 1000;
  constexpr Wide kCpuDen = 1000, kMemoryDen = 1000 * 1024, kStorageDen = kMemoryDen * kMonthSeconds;
  Wide cpu = Wide{q.cpu_millis} * plan.cpu_second_nanos;
  Wide memory = Wide{q.memory_mib_millis} * plan.memory_gib_second_nanos;
  Wide storage = Wide{q.storage_mib_millis} * plan.storage_gib_month_nanos;
  // GPU-milliseconds at a per-GPU-second price share cpu's denominator.
  cpu += Wide{q.gpu_millis} * plan.gpu_second_nanos;
  Wide whole = cpu / kCpuDen + memory / kMemoryDen + storage / kStorageDen;
  Wide parts = (cpu % kCpuDen) * (kStorageDen / kCpuDen) +
               (memory % kMemoryDen) * (kStorageDen / kMemoryDen) + storage % kStorageDen;
  Wide cost = whole + parts / kStorageDen;
  if (cost > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (cost < 0) return 0;
  return static_cast<int64_t>(cost);
}

bool PlanHasPrices(const store::PlanRecord& plan) {
  return plan.cpu_second_nanos > 0 || plan.memory_gib_second_nanos > 0 ||
         plan.storage_gib_month_nanos > 0 || plan.gpu_second_nanos > 0;
}

}  // namespace adapt::core
