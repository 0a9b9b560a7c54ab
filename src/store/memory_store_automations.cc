// MemoryStore: automations, with the contract of store/automation_store.h.
#include <algorithm>

#include "store/memory_store.h"

namespace adapt::store {

Status MemoryStore::CreateAutomation(const AutomationRecord& a, int max_per_org) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  int count = 0;
  for (const auto& x : automations_) {
    if (x.id == a.id) return Conflict("automation '" + a.id + "' already exists");
    if (x.org_id == a.org_id) ++count;
  }
  if (count >= max_per_org) {
    return Status(
        Code::kResourceExhausted,
        "the organization already has " + std::to_string(max_per_org) + " automations, its limit");
  }
  automations_.push_back(a);
  automations_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<AutomationRecord> MemoryStore::GetAutomation(const std::string& org_id,
                                                    const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& a : automations_)
    if (a.id == id && (org_id.empty() || a.org_id == org_id)) return a;
  return NotFound("automation '" + id + "' not found");
}

Result<std::vector<AutomationRecord>> MemoryStore::ListAutomations(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<AutomationRecord> out;
  for (const auto& a : automations_)
    if (a.org_id == org_id) out.push_back(a);
  return out;
}

Status MemoryStore::UpdateAutomation(const AutomationRecord& a, int64_t expected_version) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto& x : automations_) {
    if (x.id != a.id) continue;
    if (x.version != expected_version) {
      return Conflict("automation '" + a.id + "' changed since version " +
                      std::to_string(expected_version) + " was read");
    }
    x.enabled = a.enabled;
    x.paused_reason = a.paused_reason;
    x.consecutive_failures = a.consecutive_failures;
    x.next_due_at = a.next_due_at;
    x.updated_at = a.updated_at;
    x.version = expected_version + 1;
    return Status::Ok();
  }
  return NotFound("automation '" + a.id + "' not found");
}

Status MemoryStore::DeleteAutomation(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto it = automations_.begin(); it != automations_.end(); ++it) {
    if (it->id != id || it->org_id != org_id) continue;
    automations_.erase(it);
    return Status::Ok();
  }
  return NotFound("automation '" + id + "' not found");
}

Result<std::optional<int64_t>> MemoryStore::NextAutomationDue() {
  std::lock_guard lock(mu_);
  std::optional<int64_t> next;
  for (const auto& a : automations_)
    if (a.enabled && (!next || a.next_due_at < *next)) next = a.next_due_at;
  return next;
}

Result<std::vector<AutomationRecord>> MemoryStore::ListDueAutomations(int64_t now, int limit) {
  std::lock_guard lock(mu_);
  std::vector<AutomationRecord> out;
  for (const auto& a : automations_)
    if (a.enabled && a.next_due_at <= now) out.push_back(a);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.next_due_at < y.next_due_at; });
  if (static_cast<int>(out.size()) > limit) out.resize(limit);
  return out;
}

std::vector<Status> MemoryStore::ClaimAutomationSlots(const std::vector<SlotClaim>& claims) {
  std::vector<Status> out;
  {
    std::lock_guard lock(mu_);
    // One write for the whole pass, as SqliteStore's transaction: a fault fails every claim.
    if (auto fault = WriteFaultLocked()) return std::vector<Status>(claims.size(), *fault);
    for (const auto& c : claims) out.push_back(ClaimAutomationSlotLocked(c));
  }
  for (size_t i = 0; i < claims.size(); ++i) {
    if (!out[i].ok()) continue;
    for (const auto& r : claims[i].runs) AnnounceRunEvent(r.id);
  }
  return out;
}

Status MemoryStore::ClaimAutomationSlotLocked(const SlotClaim& c) {
  const std::string& id = c.automation_id;
  auto a = std::find_if(automations_.begin(), automations_.end(),
                        [&](const AutomationRecord& x) { return x.id == id; });
  if (a == automations_.end() || !a->enabled || a->next_due_at != c.expected_due)
    return Conflict("automation '" + id + "' slot was claimed or paused");
  for (const auto& r : c.runs) {
    for (const auto& x : runs_) {
      if (x.automation_id == r.automation_id && x.scheduled_at == r.scheduled_at &&
          (x.trigger == "schedule" || x.trigger == "catch_up"))
        return Conflict("automation '" + id + "' slot already fired");
    }
  }
  a->next_due_at = c.next_due;
  for (const auto& r : c.runs) UpsertRunLocked(r);
  if (c.keep_runs > 0) PruneRunsLocked("", id, 0, c.keep_runs);
  return Status::Ok();
}

Result<AutomationRecord> MemoryStore::RecordAutomationOutcome(const std::string& id, bool failed,
                                                              int pause_after,
                                                              const std::string& reason,
                                                              int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto& a : automations_) {
    if (a.id != id) continue;
    a.consecutive_failures = failed ? a.consecutive_failures + 1 : 0;
    if (failed && a.enabled && a.consecutive_failures >= pause_after) {
      a.enabled = false;
      a.paused_reason = reason;
      a.version++;
      a.updated_at = now;
    }
    return a;
  }
  return NotFound("automation '" + id + "' not found");
}

Result<int> MemoryStore::PauseAutomationsOfSandbox(const std::string& sandbox_id,
                                                   const std::string& reason, int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  int n = 0;
  for (auto& a : automations_) {
    if (a.sandbox_id != sandbox_id || !a.enabled) continue;
    a.enabled = false;
    a.paused_reason = reason;
    a.version++;
    a.updated_at = now;
    ++n;
  }
  return n;
}

Result<int> MemoryStore::FollowReplacedSandbox(const std::string& from, const std::string& to,
                                               int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  int n = 0;
  for (auto& a : automations_) {
    if (a.sandbox_id != from) continue;
    a.sandbox_id = to;
    a.version++;
    a.updated_at = now;
    ++n;
  }
  return n;
}

Result<std::vector<AutomationRecord>> MemoryStore::ListAutomationsOfSandbox(
    const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  std::vector<AutomationRecord> out;
  for (const auto& a : automations_)
    if (a.sandbox_id == sandbox_id) out.push_back(a);
  return out;
}

Result<int> MemoryStore::MakeControllersDue(int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  int n = 0;
  for (auto& a : automations_) {
    if (a.kind != "controller" || !a.enabled) continue;
    a.next_due_at = now;
    ++n;
  }
  return n;
}

}  // namespace adapt::store
