// MemoryStore: plans, billing accounts and the ledger (account_store.h).
#include <algorithm>

#include "store/memory_store.h"

namespace adapt::store {

Status MemoryStore::PutPlan(const PlanRecord& plan) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  plans_[plan.id] = plan;
  return Status::Ok();
}

Result<bool> MemoryStore::InsertPlanIfAbsent(const PlanRecord& plan) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  return plans_.emplace(plan.id, plan).second;
}

Result<PlanRecord> MemoryStore::GetPlan(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = plans_.find(id);
  if (it == plans_.end()) return NotFound("plan '" + id + "' not found");
  return it->second;
}

Result<std::vector<PlanRecord>> MemoryStore::ListPlans() {
  std::lock_guard lock(mu_);
  std::vector<PlanRecord> out;
  for (const auto& [id, plan] : plans_) out.push_back(plan);
  return out;
}

Result<BillingAccountRecord> MemoryStore::GetBillingAccount(const std::string& org_id) {
  std::lock_guard lock(mu_);
  auto it = accounts_.find(org_id);
  if (it == accounts_.end()) return NotFound("organization " + org_id + " has no account");
  return it->second;
}

Result<BillingAccountRecord> MemoryStore::EnsureBillingAccount(const BillingAccountRecord& a) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto org = std::find_if(orgs_.begin(), orgs_.end(),
                          [&](const OrgRecord& o) { return o.id == a.org_id; });
  if (org == orgs_.end()) return NotFound("organization " + a.org_id + " not found");
  if (auto it = accounts_.find(a.org_id); it != accounts_.end()) {
    org->registered = true;
    return it->second;
  }
  if (!plans_.count(a.plan_id)) return NotFound("plan '" + a.plan_id + "' not found");
  org->registered = true;
  return accounts_.emplace(a.org_id, a).first->second;
}

Status MemoryStore::SetAccountPlan(const std::string& org_id, const std::string& plan_id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (!plans_.count(plan_id)) return NotFound("plan '" + plan_id + "' not found");
  auto it = accounts_.find(org_id);
  if (it == accounts_.end()) return NotFound("organization " + org_id + " has no account");
  it->second.plan_id = plan_id;
  return Status::Ok();
}

Result<LedgerEntryRecord> MemoryStore::AppendLedgerEntry(const LedgerEntryRecord& e) {
  std::lock_guard lock(mu_);
  for (const auto& earlier : ledger_) {
    if (earlier.id != e.id) continue;
    if (earlier.org_id != e.org_id || earlier.kind != e.kind ||
        earlier.amount_nanos != e.amount_nanos)
      return Conflict("ledger entry " + e.id + " was already recorded with other values");
    return earlier;
  }
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::none_of(orgs_.begin(), orgs_.end(),
                   [&](const OrgRecord& o) { return o.id == e.org_id; }))
    return NotFound("organization " + e.org_id + " not found");
  ledger_.push_back(e);
  return e;
}

Result<std::vector<LedgerEntryRecord>> MemoryStore::ListLedger(const std::string& org_id,
                                                               std::optional<int64_t> after_seq,
                                                               int64_t limit) {
  std::lock_guard lock(mu_);
  std::vector<LedgerEntryRecord> out;
  for (size_t i = 0; i < ledger_.size(); ++i) {
    const auto& e = ledger_[i];
    int64_t seq = static_cast<int64_t>(i) + 1;
    if (e.org_id != org_id || (after_seq && seq <= *after_seq)) continue;
    if (limit > 0 && static_cast<int64_t>(out.size()) == limit) break;
    out.push_back(e);
    out.back().seq = seq;
  }
  return out;
}

Result<int64_t> MemoryStore::Balance(const std::string& org_id, int64_t now) {
  std::lock_guard lock(mu_);
  int64_t balance = 0;
  for (const auto& e : ledger_) {
    if (e.org_id != org_id) continue;
    if (e.kind != "credit")
      balance -= e.amount_nanos;
    else if (!e.expires_at || *e.expires_at > now)
      balance += e.amount_nanos;
  }
  return balance;
}

Result<OrgUsageRecord> MemoryStore::GetOrgUsage(const std::string& org_id) {
  std::lock_guard lock(mu_);
  OrgUsageRecord u;
  LiveTotals live = CountLiveLocked(org_id, "");
  u.sandboxes = live.sandboxes;
  u.cpu = live.cpu;
  u.memory_mib = live.memory_mib;
  for (const auto& s : sandboxes_)
    if (s.org_id == org_id && UsesCompute(s.status)) ++u.running_sandboxes;
  for (const auto& v : volumes_)
    if (v.org_id == org_id) u.persistent_storage_mib += v.size_mib;
  if (auto stored = ObjectBytes(org_id); stored.ok())  // releases count against it too
    u.object_storage_bytes = static_cast<int64_t>(*stored);
  for (const auto& e : endpoints_)
    if (e.org_id == org_id) ++u.endpoints;
  for (const auto& j : jobs_) u.queued_jobs += j.org_id == org_id && j.status == "queued";
  for (const auto& a : automations_) u.automations += a.org_id == org_id;
  return u;
}

}  // namespace adapt::store
