// UsageStore: what metering (core/usage_meter.h) reads and writes beside the ledger: how far it
// has metered, which sandboxes to meter, usage sums for reports, the account alerts (80% and
// 100% of the credits used) and counts for /metrics. One domain of Store (store/store.h).
// Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "store/account_store.h"
#include "store/records.h"

namespace adapt::store {

// An organization's ledger summed at one moment.
struct LedgerTotalsRecord {
  int64_t credits_nanos = 0;  // credits not expired
  int64_t usage_nanos = 0;
};

// Usage of one subject (a sandbox or a volume) summed over the entries whose period starts in
// a range. `job_id`: the job whose run the sandbox served, empty when none.
struct UsageTotalRecord {
  std::string subject_kind;
  std::string subject_id;
  std::string job_id;
  int64_t cpu_millis = 0;
  int64_t memory_mib_millis = 0;
  int64_t storage_mib_millis = 0;
  int64_t gpu_millis = 0;
  int64_t amount_nanos = 0;
  int64_t entries = 0;
  // The job run the sandbox was made for (a job's attempt gets a fresh sandbox, so its
  // usage is the run's); empty for other subjects.
  std::string run_id;
};

// Emitted once per (organization, kind, credits it was measured against): a top-up changes
// the credits, so the same alert can fire again after one.
struct AccountAlertRecord {
  int64_t seq = 0;
  std::string org_id;
  std::string kind;  // "balance_80" (80% of the credits used) or "balance_100"
  int64_t credits_nanos = 0;
  int64_t usage_nanos = 0;
  int64_t at = 0;
};

// A plan limit's 80% or 100% reached: one alert per crossing (going back under the threshold
// re-arms it).
struct LimitAlertRecord {
  int64_t seq = 0;
  std::string org_id;
  std::string limit;  // the plan limit's name: "concurrent_sandboxes", "cpu", "memory_mib", ...
  int percent = 0;    // 80 or 100
  int64_t limit_value = 0;
  int64_t used = 0;  // in the limit's unit (MiB for persistent_storage_gib's GiB, bytes for
                     // object_storage_gib's)
  int64_t at = 0;
};

// Whether `a.used` has reached `a.percent`% of `a.limit_value` (compared in 128 bits).
inline bool LimitReached(const LimitAlertRecord& a) {
  return __int128{a.used} * 100 >= __int128{a.limit_value} * a.percent;
}

// The event an alert is recorded with, in the same transaction, on its organization's event
// stream (EventRecord::alert): a balance alert is "credit_80" / "credit_100", a limit's
// "limit_80" / "limit_100".
inline EventRecord AlertEvent(const AccountAlertRecord& a) {
  EventRecord e{0, a.org_id, "", a.kind == "balance_100" ? "credit_100" : "credit_80", a.at};
  e.alert = true;
  e.alert_value = a.credits_nanos;
  e.alert_used = a.usage_nanos;
  return e;
}

inline EventRecord AlertEvent(const LimitAlertRecord& a) {
  EventRecord e{0, a.org_id, "", "limit_" + std::to_string(a.percent), a.at};
  e.alert = true;
  e.alert_limit = a.limit;
  e.alert_value = a.limit_value;
  e.alert_used = a.used;
  return e;
}

class UsageStore {
 public:
  virtual ~UsageStore() = default;

  // The end of the last usage entry written for `subject_id`; 0 when none.
  virtual Result<int64_t> MeteredUntil(const std::string& subject_id) = 0;
  // Everything that ended before this time is metered (0: nothing yet). Set after a full pass.
  virtual Result<int64_t> MeterThrough() = 0;
  virtual Status SetMeterThrough(int64_t at) = 0;
  // Sandboxes (any organization, deleted ones too) that use compute now or whose status
  // changed at or after `since`: those that may have unmetered compute time.
  virtual Result<std::vector<SandboxRecord>> SandboxesToMeter(int64_t since) = 0;
  // Every status event of the sandbox, oldest first.
  virtual Result<std::vector<EventRecord>> SandboxEvents(const std::string& sandbox_id) = 0;

  virtual Result<LedgerTotalsRecord> LedgerTotals(const std::string& org_id, int64_t now) = 0;
  // Usage entries of the organization whose period starts in [from, to), summed per subject,
  // in the order of each subject's first entry.
  virtual Result<std::vector<UsageTotalRecord>> UsageBetween(const std::string& org_id,
                                                             int64_t from, int64_t to) = 0;

  // Every usage entry of the organization's subject (a sandbox or a volume) summed
  // (subject_kind, subject_id and the sums set; entries 0 when there is none).
  virtual Result<UsageTotalRecord> UsageOfSubject(const std::string& org_id,
                                                  const std::string& subject_id) = 0;

  // Records the alert unless one with its organization, kind and credits is there, with its
  // event (AlertEvent) in the same transaction; true when it recorded it.
  virtual Result<bool> RecordAccountAlert(const AccountAlertRecord& alert) = 0;
  // Newest first, at most `limit`.
  virtual Result<std::vector<AccountAlertRecord>> ListAccountAlerts(const std::string& org_id,
                                                                    int limit) = 0;
  // One organization's limits as observed now (`limit_value`, `used`, `percent`, `at` set):
  // each whose `used` reached `percent`% of `limit_value` while its (limit, percent) was
  // under it at the previous observation (or never observed) is recorded as an alert, with its
  // event (AlertEvent); where each stands is remembered either way. Returns the alerts
  // recorded. One transaction.
  virtual Result<std::vector<LimitAlertRecord>> ObserveLimits(
      const std::string& org_id, const std::vector<LimitAlertRecord>& observed) = 0;
  // Newest first, at most `limit`.
  virtual Result<std::vector<LimitAlertRecord>> ListLimitAlerts(const std::string& org_id,
                                                                int limit) = 0;
  // Sandboxes that are not deleted, counted per (organization, status).
  virtual Result<std::map<std::pair<std::string, std::string>, int64_t>>
  CountSandboxesByStatus() = 0;
};

}  // namespace adapt::store
