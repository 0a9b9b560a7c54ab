// Accounts, plans and limits (issue 16). An organization is the account: it has a billing
// account (plan, accepted terms, registered-at) and a ledger of credits (usage later). Plans
// are data (admin API, the operator's --plans-file, a built-in default); the services that
// record something ask PlanOf() for the limits and hand them to the store, which checks them in
// the transaction that records it. Thread-safe (the store is).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/status.h"
#include "core/auth.h"
#include "store/store.h"

namespace adapt::storage {
class VolumeService;
}

namespace adapt::core {

// The plan every organization starts on; its id and the built-in values are in the README
// ("Accounts, plans and limits").
inline constexpr const char* kDefaultPlanId = "default";
// The built-in default plan's queuedJobs.
inline constexpr int64_t kDefaultQueuedJobs = 1000;

struct AccountOptions {
  std::string terms_version = "1";  // --terms-version: what register_user accepts
  int max_sandboxes_per_org = 50;   // --max-sandboxes-per-org: a cap beside every plan's
};

struct Account {
  std::string org_id;
  std::string org_name;
  bool registered = false;
  std::string terms_version;  // empty until registered
  int64_t registered_at = 0;  // millis; 0 until registered
  store::PlanRecord plan;
  store::OrgUsageRecord usage;
  int64_t balance_nanos = 0;
  int64_t credits_nanos = 0;  // credits not expired
  int64_t usage_nanos = 0;    // what metering has charged, all time
  // The latest few balance alerts, newest first.
  std::vector<store::AccountAlertRecord> alerts;
  // The latest few plan limit alerts (80% / 100% of a limit, once per crossing), newest first.
  std::vector<store::LimitAlertRecord> limit_alerts;
};

// One alert of an Account, a balance's or a limit's (exactly one of the two is set; both point
// into the Account, which must outlive the view). `kind`: "balance_80", "balance_100",
// "limit_80" or "limit_100" (the limit's name is in `limit`).
struct AccountAlertView {
  std::string kind;
  int64_t at = 0;
  const store::AccountAlertRecord* balance = nullptr;
  const store::LimitAlertRecord* limit = nullptr;
};

// GET /v1/account/usage: the usage entries whose period starts in [from, to), per sandbox
// (with the job it ran for) and per volume.
struct AccountUsage {
  int64_t from = 0;
  int64_t to = 0;
  std::vector<store::UsageTotalRecord> items;
  store::UsageTotalRecord total;  // every item summed (no subject)
};

struct LedgerPage {
  std::vector<store::LedgerEntryRecord> items;
  std::optional<std::string> next_cursor;  // unset on the last page
};

struct AddCredit {
  std::string org_id;
  int64_t amount_nanos = 0;
  std::string reason;
  std::optional<int64_t> expires_at;  // millis
  std::string id;                     // idempotency: a retry with the same id adds nothing
};

// GET /metrics (admin key): one organization's numbers.
struct OrgMetrics {
  std::string org_id;
  store::PlanRecord plan;
  int64_t credits_nanos = 0;
  int64_t usage_nanos = 0;
  store::UsageTotalRecord used;  // all time, every subject summed
};

struct MetricsSnapshot {
  std::vector<OrgMetrics> orgs;
  std::map<std::pair<std::string, std::string>, int64_t> sandboxes;  // (org, status) -> count
};

class AccountService {
 public:
  AccountService(store::Store& store, AccountOptions options);

  // The built-in default plan (the README documents its values).
  static store::PlanRecord BuiltInDefaultPlan(int max_sandboxes_per_org);
  // Writes the built-in default plan unless a plan has its id, then `operator_plans` (the
  // --plans-file), each replacing the stored one. Run once before serving.
  Status LoadPlans(const std::vector<store::PlanRecord>& operator_plans);
  // Where registration makes the organization's `default` storage; without it, none is made.
  void set_volume_service(storage::VolumeService* volumes) { volumes_ = volumes; }

  // The caller's account. A registered organization without a billing account yet (made by
  // an operator) gets one on the default plan now.
  Result<Account> Get(const Principal& who);
  // register_user: accepts the terms, makes the billing account on the default plan and the
  // `default` storage, marks the organization registered. Idempotent: the same account again.
  Result<Account> Register(const Principal& who);
  // A page of the caller's ledger (credits and usage), oldest first, after `cursor` (a
  // list cursor this server issued; empty: the start). `limit` 0 reads to the end.
  Result<LedgerPage> Ledger(const Principal& who, const std::string& cursor, int64_t limit);
  // The caller's usage in [from, to) (millis); InvalidArgument when `to` is not after `from`.
  Result<AccountUsage> Usage(const Principal& who, int64_t from, int64_t to);
  // kPaymentRequired when `plan` has prices and the organization's balance is 0 or less:
  // what creates and starts of compute check first.
  Status RequireBalance(const std::string& org_id, const store::PlanRecord& plan);

  // Admin key only.
  // One page of the plans in id order (a catalogue: plans have no creation order, and an update
  // rewrites the row); key cursors. InvalidArgument for a bad limit or cursor.
  Result<Page<store::PlanRecord>> ListPlans(const Principal& who, const PageRequest& page = {});
  Result<store::PlanRecord> GetPlan(const Principal& who, const std::string& id);
  Result<store::PlanRecord> PutPlan(const Principal& who, store::PlanRecord plan);
  Result<Account> SetOrgPlan(const Principal& who, const std::string& org_id,
                             const std::string& plan_id);
  // With an Idempotency-Key, a repeat of the request answers the entry the first one made and
  // credits nothing again (the same key with another body: Conflict).
  Result<store::LedgerEntryRecord> Credit(
      const Principal& who, AddCredit credit,
      const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  // Every organization's balance, usage and plan, and sandboxes by status (account_metrics.cc).
  Result<MetricsSnapshot> Metrics(const Principal& who);

  // The plan whose limits apply to `org_id` now: its account's, else the default.
  Result<store::PlanRecord> PlanOf(const std::string& org_id);
  // The plan's sandbox limits with the daemon-wide --max-sandboxes-per-org cap folded in.
  store::SandboxLimits SandboxLimitsOf(const store::PlanRecord& plan) const;

 private:
  Result<store::BillingAccountRecord> AccountRecordOf(const store::OrgRecord& org);
  Result<Account> ViewOf(const store::OrgRecord& org, const store::BillingAccountRecord& account);
  // Credits, usage, balance and alerts of `a.org_id`.
  Status FillBalance(Account& a);

  store::Store& store_;
  AccountOptions options_;
  storage::VolumeService* volumes_ = nullptr;
};

// The account's balance and limit alerts together, newest first, at most `most`.
std::vector<AccountAlertView> AlertsNewestFirst(const Account& account, size_t most);

// Checks a plan's id, name and values (limits and prices not negative); field names as the
// store's (`cpu`, `memory_mib`, ...).
Status ValidatePlan(const store::PlanRecord& plan);

// OK when `adding` more GPUs beside `in_use` fit the plan's gpus limit (none: no limit), else
// kResourceExhausted naming the limit, its value and what to do, about `field`.
Status GpuLimitRefusal(const store::PlanRecord& plan, int64_t in_use, int64_t adding,
                       const std::string& field);

// The refusal for a sandbox asking to run longer than the plan allows (or for ever).
Status RunTimeRefusal(int64_t max_run_seconds, const std::string& ttl_field);

}  // namespace adapt::core
