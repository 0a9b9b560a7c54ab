// Per-limit alerts (issue 16): at 80% and at 100% of each plan limit an organization uses, an
// alert, once per crossing. The meter's pass observes every organization's usage against its
// plan (LimitObservations) and the store records an alert where a threshold was crossed
// since the last observation (UsageStore::ObserveLimits).
#pragma once

#include <cstdint>
#include <vector>

#include "store/store.h"

namespace adapt::core {

// The percentages alerted on.
inline constexpr int kLimitAlertPercents[] = {80, 100};

// For each limit of `plan` that is set and above 0 (concurrent sandboxes with the daemon's cap
// folded in: `sandboxes`), what `usage` holds of it, at each of kLimitAlertPercents. Units:
// the limit's own, except persistent_storage_gib and object_storage_gib, compared in MiB and
// bytes (limit_value converted too).
std::vector<store::LimitAlertRecord> LimitObservations(const store::PlanRecord& plan,
                                                       const store::SandboxLimits& sandboxes,
                                                       const store::OrgUsageRecord& usage,
                                                       int64_t now);

}  // namespace adapt::core
