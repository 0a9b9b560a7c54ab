// AccountService::Metrics: what GET /metrics shows, read in one pass over the organizations.
#include <limits>

#include "base/time.h"
#include "core/account_service.h"

namespace adapt::core {

Result<MetricsSnapshot> AccountService::Metrics(const Principal& who) {
  if (!who.is_admin) return Status(Code::kPermissionDenied, "this action needs the admin key");
  MetricsSnapshot out;
  int64_t now = NowMillis();
  ASSIGN_OR_RETURN(std::vector<store::OrgRecord> orgs, store_.ListOrgs());
  for (const auto& org : orgs) {
    OrgMetrics m;
    m.org_id = org.id;
    ASSIGN_OR_RETURN(m.plan, PlanOf(org.id));
    ASSIGN_OR_RETURN(store::LedgerTotalsRecord totals, store_.LedgerTotals(org.id, now));
    m.credits_nanos = totals.credits_nanos;
    m.usage_nanos = totals.usage_nanos;
    ASSIGN_OR_RETURN(std::vector<store::UsageTotalRecord> subjects,
                     store_.UsageBetween(org.id, 0, std::numeric_limits<int64_t>::max()));
    for (const auto& u : subjects) {
      m.used.cpu_millis += u.cpu_millis;
      m.used.memory_mib_millis += u.memory_mib_millis;
      m.used.storage_mib_millis += u.storage_mib_millis;
      m.used.gpu_millis += u.gpu_millis;
      m.used.amount_nanos += u.amount_nanos;
      m.used.entries += u.entries;
    }
    out.orgs.push_back(std::move(m));
  }
  ASSIGN_OR_RETURN(out.sandboxes, store_.CountSandboxesByStatus());
  return out;
}

}  // namespace adapt::core
