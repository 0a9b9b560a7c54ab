// MemoryStore: metering's marks, usage sums, account alerts and counts (usage_store.h).
#include <algorithm>
#include <set>

#include "store/memory_store.h"

namespace adapt::store {

Result<int64_t> MemoryStore::MeteredUntil(const std::string& subject_id) {
  std::lock_guard lock(mu_);
  int64_t until = 0;
  for (const auto& e : ledger_)
    if (e.kind == "usage" && e.subject_id == subject_id) until = std::max(until, e.period_end);
  return until;
}

Result<int64_t> MemoryStore::MeterThrough() {
  std::lock_guard lock(mu_);
  return meter_through_;
}

Status MemoryStore::SetMeterThrough(int64_t at) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  meter_through_ = at;
  return Status::Ok();
}

Result<std::vector<SandboxRecord>> MemoryStore::SandboxesToMeter(int64_t since) {
  std::lock_guard lock(mu_);
  std::set<std::string> changed;
  for (const auto& e : events_)
    if (e.at >= since) changed.insert(e.sandbox_id);
  std::vector<SandboxRecord> out;
  for (const auto& s : sandboxes_)
    if (UsesCompute(s.status) || changed.count(s.id)) out.push_back(s);
  return out;
}

Result<std::vector<EventRecord>> MemoryStore::SandboxEvents(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  std::vector<EventRecord> out;
  for (const auto& e : events_)
    if (e.sandbox_id == sandbox_id) out.push_back(e);
  return out;
}

Result<LedgerTotalsRecord> MemoryStore::LedgerTotals(const std::string& org_id, int64_t now) {
  std::lock_guard lock(mu_);
  LedgerTotalsRecord t;
  for (const auto& e : ledger_) {
    if (e.org_id != org_id) continue;
    if (e.kind != "credit")
      t.usage_nanos += e.amount_nanos;
    else if (!e.expires_at || *e.expires_at > now)
      t.credits_nanos += e.amount_nanos;
  }
  return t;
}

Result<std::vector<UsageTotalRecord>> MemoryStore::UsageBetween(const std::string& org_id,
                                                                int64_t from, int64_t to) {
  std::lock_guard lock(mu_);
  std::vector<UsageTotalRecord> out;
  for (const auto& e : ledger_) {
    if (e.org_id != org_id || e.kind != "usage" || e.period_start < from || e.period_start >= to)
      continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const UsageTotalRecord& u) {
      return u.subject_kind == e.subject_kind && u.subject_id == e.subject_id;
    });
    if (it == out.end()) {
      UsageTotalRecord u;
      u.subject_kind = e.subject_kind;
      u.subject_id = e.subject_id;
      for (const auto& r : runs_)
        if (r.org_id == org_id && r.sandbox_id == e.subject_id) {
          u.job_id = r.job_id;
          break;
        }
      for (const auto& r : runs_)
        if (r.org_id == org_id && r.sandbox_id == e.subject_id && !r.job_id.empty()) {
          u.run_id = r.id;
          break;
        }
      it = out.insert(out.end(), u);
    }
    it->cpu_millis += e.cpu_millis;
    it->memory_mib_millis += e.memory_mib_millis;
    it->storage_mib_millis += e.storage_mib_millis;
    it->gpu_millis += e.gpu_millis;
    it->amount_nanos += e.amount_nanos;
    ++it->entries;
  }
  return out;
}

Result<UsageTotalRecord> MemoryStore::UsageOfSubject(const std::string& org_id,
                                                     const std::string& subject_id) {
  std::lock_guard lock(mu_);
  UsageTotalRecord u;
  u.subject_id = subject_id;
  for (const auto& e : ledger_) {
    if (e.org_id != org_id || e.kind != "usage" || e.subject_id != subject_id) continue;
    u.subject_kind = e.subject_kind;
    u.cpu_millis += e.cpu_millis;
    u.memory_mib_millis += e.memory_mib_millis;
    u.storage_mib_millis += e.storage_mib_millis;
    u.gpu_millis += e.gpu_millis;
    u.amount_nanos += e.amount_nanos;
    ++u.entries;
  }
  return u;
}

Result<bool> MemoryStore::RecordAccountAlert(const AccountAlertRecord& alert) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (const auto& a : alerts_)
    if (a.org_id == alert.org_id && a.kind == alert.kind && a.credits_nanos == alert.credits_nanos)
      return false;
  AccountAlertRecord stored = alert;
  stored.seq = next_seq_++;
  alerts_.push_back(stored);
  EventRecord event = AlertEvent(stored);
  event.seq = next_seq_++;
  events_.push_back(std::move(event));
  return true;
}

Result<std::vector<AccountAlertRecord>> MemoryStore::ListAccountAlerts(const std::string& org_id,
                                                                       int limit) {
  std::lock_guard lock(mu_);
  std::vector<AccountAlertRecord> out;
  for (auto it = alerts_.rbegin(); it != alerts_.rend() && static_cast<int>(out.size()) < limit;
       ++it)
    if (it->org_id == org_id) out.push_back(*it);
  return out;
}

Result<std::vector<LimitAlertRecord>> MemoryStore::ObserveLimits(
    const std::string& org_id, const std::vector<LimitAlertRecord>& observed) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::vector<LimitAlertRecord> recorded;
  for (LimitAlertRecord a : observed) {
    auto key = std::make_tuple(org_id, a.limit, a.percent);
    if (!LimitReached(a)) {
      limits_reached_.erase(key);
      continue;
    }
    if (!limits_reached_.insert(key).second) continue;
    a.org_id = org_id;
    a.seq = next_seq_++;
    limit_alerts_.push_back(a);
    EventRecord event = AlertEvent(a);
    event.seq = next_seq_++;
    events_.push_back(std::move(event));
    recorded.push_back(a);
  }
  return recorded;
}

Result<std::vector<LimitAlertRecord>> MemoryStore::ListLimitAlerts(const std::string& org_id,
                                                                   int limit) {
  std::lock_guard lock(mu_);
  std::vector<LimitAlertRecord> out;
  for (auto it = limit_alerts_.rbegin();
       it != limit_alerts_.rend() && static_cast<int>(out.size()) < limit; ++it)
    if (it->org_id == org_id) out.push_back(*it);
  return out;
}

Result<std::map<std::pair<std::string, std::string>, int64_t>>
MemoryStore::CountSandboxesByStatus() {
  std::lock_guard lock(mu_);
  std::map<std::pair<std::string, std::string>, int64_t> out;
  for (const auto& s : sandboxes_)
    if (s.status != "deleted") ++out[{s.org_id, s.status}];
  return out;
}

}  // namespace adapt::store
