// AccountStore: plans, each organization's billing account, and its ledger (credits, and the
// usage entries metering writes: store/usage_store.h). One domain of Store (store/store.h). Every
// method is one transaction; implementations are thread-safe. Money is integer nano-units (1e-9 of
// the operator's currency unit): no floating point anywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::store {

// A plan: limits (unset: no limit) and prices. Plain data; core/account_service.h gives the
// fields their meaning and the built-in default.
struct PlanRecord {
  std::string id;
  std::string name;
  std::optional<int64_t> concurrent_sandboxes;  // not deleting, deleted or failed
  std::optional<int64_t> cpu;                   // total of provisioning and running sandboxes
  std::optional<int64_t> memory_mib;            // likewise
  std::optional<int64_t> max_run_seconds;       // caps a sandbox's ttl
  std::optional<int64_t> persistent_storage_gib;
  std::optional<int64_t> object_storage_gib;
  std::optional<int64_t> gpus;
  std::optional<int64_t> automations;
  std::optional<int64_t> queued_jobs;
  std::optional<int64_t> endpoints;
  std::optional<int64_t> database_mib;          // the organization's PostgreSQL database size
  std::optional<int64_t> database_connections;  // its owner role's connection limit
  std::optional<int64_t> app_replicas;          // replicas of one deployed app
  int64_t cpu_second_nanos = 0;
  int64_t memory_gib_second_nanos = 0;
  int64_t storage_gib_month_nanos = 0;
  int64_t gpu_second_nanos = 0;
  int64_t updated_at = 0;
};

struct BillingAccountRecord {
  std::string org_id;
  std::string plan_id;
  std::string terms_version;  // the operator's terms the organization accepted
  int64_t registered_at = 0;
};

// One ledger line. Append-only: an entry is never changed or removed. `id` makes appends
// idempotent (a retry with the same id is answered with the first entry).
struct LedgerEntryRecord {
  int64_t seq = 0;  // append order, set by the store when listed: cursors use it
  std::string id;
  std::string org_id;
  std::string kind;          // "credit" or "usage"
  int64_t amount_nanos = 0;  // credit: positive; usage: what it cost (0 or more)
  std::string reason;
  std::optional<int64_t> expires_at;  // a credit that lapses (millis); unset: never
  int64_t created_at = 0;
  // Usage only: what was used, by what, over [period_start, period_end) (millis). Quantities
  // are exact integers: cpus x milliseconds, MiB x milliseconds, GPUs x milliseconds.
  std::string subject_kind;  // "sandbox" or "volume"
  std::string subject_id;
  int64_t period_start = 0;
  int64_t period_end = 0;
  int64_t cpu_millis = 0;
  int64_t memory_mib_millis = 0;
  int64_t storage_mib_millis = 0;
  int64_t gpu_millis = 0;
};

// What an organization holds now, counted in one read.
struct OrgUsageRecord {
  int64_t sandboxes = 0;          // not deleting, deleted or failed
  int64_t running_sandboxes = 0;  // provisioning or running
  int64_t cpu = 0;                // of the provisioning and running ones
  int64_t memory_mib = 0;
  int64_t persistent_storage_mib = 0;  // sum of volume sizes
  int64_t object_storage_bytes = 0;
  int64_t endpoints = 0;
  int64_t queued_jobs = 0;
  int64_t automations = 0;
};

class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // Inserts or replaces the plan by id.
  virtual Status PutPlan(const PlanRecord& plan) = 0;
  // Inserts the plan unless one has its id; true when it inserted.
  virtual Result<bool> InsertPlanIfAbsent(const PlanRecord& plan) = 0;
  // NotFound when no plan has this id.
  virtual Result<PlanRecord> GetPlan(const std::string& id) = 0;
  // By id.
  virtual Result<std::vector<PlanRecord>> ListPlans() = 0;

  // NotFound when the organization has no billing account.
  virtual Result<BillingAccountRecord> GetBillingAccount(const std::string& org_id) = 0;
  // Inserts the account unless the organization has one, and marks the organization
  // registered (OrgRecord::registered) in the same transaction; returns the stored account
  // either way (so two concurrent registrations agree). NotFound when the plan or
  // organization is unknown.
  virtual Result<BillingAccountRecord> EnsureBillingAccount(
      const BillingAccountRecord& account) = 0;
  // NotFound when the organization has no account or the plan does not exist.
  virtual Status SetAccountPlan(const std::string& org_id, const std::string& plan_id) = 0;

  // Appends the entry; an entry with the same id already there is returned instead (replayed,
  // Conflict when it differs in organization, kind or amount). NotFound for an unknown org.
  virtual Result<LedgerEntryRecord> AppendLedgerEntry(const LedgerEntryRecord& entry) = 0;
  // Oldest first: the entries appended after `after_seq` (every one when unset), at most
  // `limit` of them (0: no limit).
  virtual Result<std::vector<LedgerEntryRecord>> ListLedger(
      const std::string& org_id, std::optional<int64_t> after_seq = std::nullopt,
      int64_t limit = 0) = 0;
  // Credits not expired at `now` minus usage, in nano-units.
  virtual Result<int64_t> Balance(const std::string& org_id, int64_t now) = 0;

  virtual Result<OrgUsageRecord> GetOrgUsage(const std::string& org_id) = 0;
};

}  // namespace adapt::store
