#include "core/limit_alerts.h"

#include <optional>
#include <string>

namespace adapt::core {

std::vector<store::LimitAlertRecord> LimitObservations(const store::PlanRecord& plan,
                                                       const store::SandboxLimits& sandboxes,
                                                       const store::OrgUsageRecord& usage,
                                                       int64_t now) {
  struct Measured {
    const char* limit;
    std::optional<int64_t> value;
    int64_t used;
  };
  auto scaled = [](const std::optional<int64_t>& gib, int shift) -> std::optional<int64_t> {
    if (!gib) return std::nullopt;
    return *gib << shift;
  };
  const Measured measured[] = {
      {"concurrent_sandboxes", sandboxes.sandboxes, usage.sandboxes},
      {"cpu", plan.cpu, usage.cpu},
      {"memory_mib", plan.memory_mib, usage.memory_mib},
      {"persistent_storage_gib", scaled(plan.persistent_storage_gib, 10),
       usage.persistent_storage_mib},
      {"object_storage_gib", scaled(plan.object_storage_gib, 30), usage.object_storage_bytes},
      {"endpoints", plan.endpoints, usage.endpoints},
      {"queued_jobs", plan.queued_jobs, usage.queued_jobs},
      {"automations", plan.automations, usage.automations},
  };
  std::vector<store::LimitAlertRecord> out;
  for (const auto& m : measured) {
    // A limit of 0 allows nothing: there is nothing to warn about before it refuses.
    if (!m.value || *m.value <= 0) continue;
    for (int percent : kLimitAlertPercents)
      out.push_back({0, "", m.limit, percent, *m.value, m.used, now});
  }
  return out;
}

}  // namespace adapt::core
