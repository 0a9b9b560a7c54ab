// AutomationStore: schedules (and later controllers) of an organization (issue 18). One domain
// of Store (store/store.h). Their runs are rows of JobStore's runs table (automation_id set);
// a slot's run is unique per (automation_id, scheduled_at), so a slot fires at most once. Every
// method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/idempotency_store.h"
#include "store/job_store.h"

namespace adapt::store {

struct AutomationRecord {
  std::string id;
  std::string org_id;
  std::string name;
  std::string kind = "schedule";
  std::string sandbox_id;  // the target
  // The command.
  std::vector<std::string> argv;
  std::string cwd;
  std::map<std::string, std::string> env;  // sealed at rest, as a sandbox's env
  int timeout_seconds = 600;
  // The schedule: an interval, or a cron expression read in time_zone.
  int64_t interval_seconds = 0;  // 0: cron
  std::string cron;
  std::string time_zone = "UTC";
  std::string overlap = "skip";  // skip, buffer_one, allow, cancel_previous
  int64_t catch_up_seconds = 3600;
  // Attempts of one slot on an instant target: an infrastructure failure retries in a fresh
  // sandbox until this many were made.
  int max_attempts = 3;
  // A controller (kind "controller"; argv empty): the state it holds its target in, "running"
  // or "hibernated"; with a schedule above (interval or cron), only inside the windows of
  // window_seconds opening at each slot, and the other state outside them.
  std::string desired_state;
  int64_t window_seconds = 0;
  bool enabled = true;
  std::string paused_reason;  // why it was paused by adaptd (empty: by its owner, or running)
  int64_t version = 1;        // bumped by every change its owner can see
  int consecutive_failures = 0;
  int64_t next_due_at = 0;  // ms; the slot the scheduler claims next
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// One slot claim of ClaimAutomationSlots.
struct SlotClaim {
  std::string automation_id;
  int64_t expected_due = 0;
  int64_t next_due = 0;
  std::vector<RunRecord> runs;
  // When > 0: the automation's ended runs past its newest `keep_runs` are forgotten in the same
  // transaction, as PruneRuns does. Slots skipped or missed end no run (nothing else prunes
  // after them), so a schedule every second over a spent balance would grow without bound.
  int keep_runs = 0;
};

// Its creates take an Idempotency-Key: the idempotency table is reachable from it.
class AutomationStore : public virtual IdempotencyStore {
 public:
  virtual ~AutomationStore() = default;

  // Inserts `a` unless its organization already has `max_per_org` automations
  // (kResourceExhausted), counted in the same transaction.
  virtual Status CreateAutomation(const AutomationRecord& a, int max_per_org) = 0;
  // NotFound unless it belongs to the organization ("": any organization).
  virtual Result<AutomationRecord> GetAutomation(const std::string& org_id,
                                                 const std::string& id) = 0;
  // Oldest first.
  virtual Result<std::vector<AutomationRecord>> ListAutomations(const std::string& org_id) = 0;
  // Replaces the owner-visible state (enabled, paused_reason, consecutive_failures,
  // next_due_at, updated_at) if the stored version is `expected_version`, and stores
  // expected_version + 1; kConflict (nothing changes) otherwise.
  virtual Status UpdateAutomation(const AutomationRecord& a, int64_t expected_version) = 0;
  virtual Status DeleteAutomation(const std::string& org_id, const std::string& id) = 0;
  // The earliest next_due_at of an enabled automation (the scheduler's next wake-up).
  virtual Result<std::optional<int64_t>> NextAutomationDue() = 0;
  // Enabled automations due at or before `now`, earliest first.
  virtual Result<std::vector<AutomationRecord>> ListDueAutomations(int64_t now, int limit) = 0;
  // Claims the slot `expected_due` of automation `id`: if it is enabled and its next_due_at is
  // still `expected_due`, moves next_due_at to `next_due` and inserts `runs` (their slots
  // unique per automation), all in one transaction; kConflict and nothing changes otherwise.
  // (SlotClaim::keep_runs prunes too.)
  Status ClaimAutomationSlot(const std::string& id, int64_t expected_due, int64_t next_due,
                             const std::vector<RunRecord>& runs) {
    return ClaimAutomationSlots({{id, expected_due, next_due, runs}}).front();
  }
  // Each claim as ClaimAutomationSlot makes it, all in one transaction: one durable write for
  // a scheduler pass, however many slots fell due in it. Per claim: Ok, or kConflict with
  // nothing of that claim changed (the others stand); a failed write fails them all.
  virtual std::vector<Status> ClaimAutomationSlots(const std::vector<SlotClaim>& claims) = 0;
  // After a run ended: a failure adds one to consecutive_failures and, at `pause_after`,
  // pauses it with `reason` (version + 1); a success resets the count. Returns the record.
  virtual Result<AutomationRecord> RecordAutomationOutcome(const std::string& id, bool failed,
                                                           int pause_after,
                                                           const std::string& reason,
                                                           int64_t now) = 0;
  // Pauses every enabled automation targeting `sandbox_id` with `reason` (version + 1);
  // returns how many.
  virtual Result<int> PauseAutomationsOfSandbox(const std::string& sandbox_id,
                                                const std::string& reason, int64_t now) = 0;
  // Automations targeting sandbox `from` target `to` instead (an instant target replaced by a
  // fresh sandbox after an infrastructure failure), each one's version one more; returns how
  // many.
  virtual Result<int> FollowReplacedSandbox(const std::string& from, const std::string& to,
                                            int64_t now) = 0;
  // Every automation (of any organization) targeting `sandbox_id`, oldest first.
  virtual Result<std::vector<AutomationRecord>> ListAutomationsOfSandbox(
      const std::string& sandbox_id) = 0;
  // Every enabled controller becomes due at `now` (adaptd started: what drifted while it was
  // down is reconciled); returns how many.
  virtual Result<int> MakeControllersDue(int64_t now) = 0;
};

}  // namespace adapt::store
