// AutomationService: an organization's schedules (seed 000's create_sandbox_automation,
// list_sandbox_automations, set_sandbox_automation_enabled, delete_sandbox_automation) and the
// scheduler that fires them. REST, MCP and the CLI only translate into these verbs. Runs are
// rows of JobStore's runs table, read and cancelled through JobService.
//
// The scheduler sleeps until the earliest next_due_at of an enabled automation (an index), or
// until a change wakes it; then each due automation's slot is claimed in one transaction that
// moves next_due_at and records the slot's run (unique per slot), so a slot fires at most once.
// Slots missed while adaptd was down: those inside the catch-up window collapse into one
// catch_up run, older ones are recorded as one missed run. Overlap: skip (default) records
// skipped_overlap while a run of the automation executes; buffer_one keeps one such slot
// (queued) and starts it when the executing run ends, skipping the others; allow starts
// another; cancel_previous cancels the executing one first. A non-zero exit is the application's
// result and never retried. A run cut by an infrastructure failure ends infrastructure_failed; on
// an instant target the slot is then retried (trigger retry, the next attempt) in a fresh sandbox
// with the target's settings until max_attempts were made, and the automations of the old
// target follow the new one (sandboxId changes, version goes up). After kPauseAfterFailures
// consecutive failed slots the automation is paused with that reason; deleting its target
// pauses it too. Thread-safe.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/list_cursor.h"
#include "core/auth.h"
#include "core/automation_runner.h"
#include "core/automation_schedule.h"
#include "core/controller_window.h"
#include "core/event_bus.h"
#include "core/field_names.h"
#include "core/job_view.h"
#include "store/automation_store.h"
#include "store/job_store.h"

namespace adapt::core {

// Seed 000 names the two kinds SandboxSchedule and SandboxController; the wire's words are
// schedule and controller. Either is accepted: the seed's word becomes the wire's, any other
// word is returned as given (and refused by Create).
std::string AutomationKindOf(const std::string& word);

struct CreateAutomationRequest {
  std::string name;  // empty: the id
  std::string kind;  // empty: schedule; or controller (core/controller_service.h)
  std::string sandbox_id;
  std::vector<std::string> argv;  // an edge turns a shell string into {"/bin/sh", "-c", it}
  std::string cwd;
  std::map<std::string, std::string> env;
  std::optional<int64_t> timeout_seconds;   // 1..86400, default 600
  std::optional<int64_t> interval_seconds;  // >= 1; or cron
  std::string cron;
  std::string time_zone;                    // empty: UTC
  std::string overlap;                      // empty: skip
  std::optional<int64_t> catch_up_seconds;  // 0..604800, default 3600
  std::optional<int64_t> max_attempts;      // 1..10, default 3
  // A controller's: the state it holds (running, hibernated), and with interval_seconds or
  // cron (and time_zone), the length of the windows in which it holds it (the other state
  // outside them). A controller takes no command, overlap, catch-up or attempts.
  std::string desired_state;
  std::optional<int64_t> window_seconds;
};

// What callers see: the record with env values removed, and the next slots.
struct Automation : store::AutomationRecord {
  std::vector<int64_t> next_runs;         // ms; a schedule's next five while enabled
  std::vector<StateChange> next_changes;  // a controller's next five changes of state
};

class ControllerService;

class AutomationService {
 public:
  static constexpr int kMaxPerOrg = 100;
  static constexpr int kPauseAfterFailures = 5;
  static constexpr int kDefaultMaxAttempts = 3;
  static constexpr int kMaxAttempts = 10;
  // The longest cron a schedule or controller may have, on every surface (MCP's schema says
  // the same): its parse and every slot's search are bounded by it.
  static constexpr size_t kMaxCronBytes = 256;
  // overlap "allow": at most this many of an automation's runs execute at once; a slot past
  // it is skipped_overlap.
  static constexpr size_t kMaxOverlappingRuns = 10;
  using Clock = std::function<int64_t()>;  // ms since the epoch

  AutomationService(store::AutomationStore& automations, store::JobStore& runs,
                    AutomationRunner& runner, Clock clock = {});
  ~AutomationService();

  // Where the organization's plan limit on automations comes from (nullopt: kMaxPerOrg; a
  // plan never raises it past kMaxPerOrg). Set before serving.
  void set_plan_limit(std::function<std::optional<int64_t>(const std::string& org_id)> limit) {
    plan_limit_ = std::move(limit);
  }
  // Whether the organization may start a run now (the accounts' balance stop): kPaymentRequired
  // or kResourceExhausted records the run skipped_quota instead of starting it, as JobService's
  // admission does; anything else starts it. Set before serving.
  void set_run_admission(std::function<Status(const std::string& org_id)> admission) {
    admission_ = std::move(admission);
  }
  // Where controllers (kind controller) are reconciled; without it, creating one is refused.
  // Set before serving (automation_controllers.cc).
  void set_controllers(ControllerService* controllers);

  // With `idempotency` (scope "automation"): a key the organization already used answers the
  // automation it made (Conflict for another request); a new one is recorded with it.
  Result<Automation> Create(const Principal& who, const CreateAutomationRequest& req,
                            const FieldNames& names = {},
                            const std::optional<store::IdempotencyKey>& idempotency = {});
  // A newest-first page of the organization's automations; InvalidArgument for a bad limit
  // or cursor.
  Result<Page<Automation>> List(const Principal& who, const PageRequest& page);
  Result<Automation> Get(const Principal& who, const std::string& id);
  // Pauses or resumes; with `version`, only if the automation is still at it (kConflict and
  // nothing changes otherwise). A resume schedules from now on (missed slots are not caught up).
  Result<Automation> SetEnabled(const Principal& who, const std::string& id, bool enabled,
                                std::optional<int64_t> version);
  // Deletes the automation, never its sandbox; its runs expire on their own.
  Status Delete(const Principal& who, const std::string& id);
  // A manual run now; the schedule does not shift. The overlap policy applies. With
  // `idempotency` (scope "run"): a key the organization already used answers the run it
  // started and starts none (Conflict for another request).
  Result<Run> Trigger(const Principal& who, const std::string& id,
                      const std::optional<store::IdempotencyKey>& idempotency = {});

  // Recover, then the scheduler thread starts. Call once, before serving.
  void Start();
  // Runs a previous adaptd left executing: one in `running` with its command started is
  // re-attached (AutomationRunner::Reattach) and ends as it would have (a lost command or a
  // target gone is an infrastructure failure, retried as any); the others end
  // infrastructure_failed, not retried; controllers look again. Start calls it; tests too.
  void Recover();
  // Stops the scheduler thread; runs in flight report nothing more.
  void Shutdown();
  // One scheduler pass at `now` (ms): fires every due slot. The thread calls it; tests too.
  void Tick(int64_t now);
  // The target sandbox was deleted or expired: its automations are paused with that reason.
  void TargetGone(const std::string& sandbox_id, const std::string& why);
  // Listens to sandbox status changes on `bus`: a target deleted (or expired) pauses its
  // automations (they never run against nothing). The check runs on `workers`, not on the
  // thread that wrote the change. Call once, before serving; Shutdown stops listening.
  void WatchTargets(EventBus& bus, boost::asio::thread_pool& workers);
  // cancel_automation_run for a run of an automation (JobService asks): false when it does
  // not execute here.
  bool CancelRun(const std::string& run_id);

 private:
  int64_t Now() const;
  // Create for kind schedule, and for kind controller (automation_controllers.cc).
  Result<Automation> CreateSchedule(const Principal& who, const CreateAutomationRequest& req,
                                    const FieldNames& names,
                                    const std::optional<store::IdempotencyClaim>& claim);
  Result<Automation> CreateController(const Principal& who, const CreateAutomationRequest& req,
                                      const FieldNames& names,
                                      const std::optional<store::IdempotencyClaim>& claim);
  // Stores the new automation, with its key's claim in the same transaction, and wakes the
  // scheduler; the automation as stored (a concurrent request with the key: the one it made).
  Result<Automation> InsertAutomation(const Principal& who, const store::AutomationRecord& a,
                                      const std::optional<store::IdempotencyClaim>& claim);
  int64_t PlanLimit(const std::string& org_id) const;
  Automation ViewOf(const store::AutomationRecord& a) const;
  // A due slot of a schedule, planned for the pass's claim.
  struct Firing {
    store::AutomationRecord a;
    store::SlotClaim claim;
    store::RunRecord run;  // the slot's run, when `covered`
    bool start = false;    // whether the run starts once claimed
    bool covered = false;  // whether a slot in the catch-up window is due (else: missed only)
  };
  // The slot's claim and run (the overlap policy applied in memory); nullopt, with the
  // automation paused, when its schedule cannot be read.
  std::optional<Firing> Plan(const store::AutomationRecord& a, int64_t now);
  // Records nothing: applies the overlap policy to `run` (skipped_overlap; queued for
  // buffer_one, which the caller hands to Buffer once recorded) or cancels the executing runs
  // (cancel_previous). False when the run must not start now.
  bool MayStart(const store::AutomationRecord& a, store::RunRecord& run);
  // False, with `run` made skipped_quota, when the admission refuses it.
  bool Admitted(const store::AutomationRecord& a, store::RunRecord& run);
  void Launch(const store::AutomationRecord& a, store::RunRecord run);
  // Recover's: follows run `run`, which a previous adaptd left running, to its end.
  void Reattach(store::RunRecord run);
  // Recover's: deletes each sandbox made to replace an automation's target (retry or
  // controller recreate) that the automation does not follow: a crash came between its making
  // and the follow (it would run unused until its TTL, counted against the organization's
  // limits), or between the follow and the delete of the target it replaced.
  void DiscardUnfollowedReplacements();

  // buffer_one: keeps recorded run `run` (queued) to start when the executing run ends, or
  // starts it now if that run ended meanwhile; skipped_overlap if another already waits.
  void Buffer(const store::AutomationRecord& a, store::RunRecord run);
  // Starts a buffered run (its automation read again), already counted in executing_; one
  // whose automation was paused or deleted meanwhile ends cancelled.
  void StartBuffered(store::RunRecord run);
  void RunEnded(const store::AutomationRecord& a, const std::string& run_id, AttemptEnd end);
  // After `failed` ended infrastructure_failed: its next attempt in a fresh sandbox, which the
  // automations of the old target follow. False when none is made (durable or lost target,
  // automation paused or deleted meanwhile).
  bool Retry(const store::AutomationRecord& a, const store::RunRecord& failed, int64_t now);
  void Loop();
  void Wake();

  store::AutomationStore& automations_;
  store::JobStore& runs_;
  AutomationRunner& runner_;
  Clock clock_;
  std::function<std::optional<int64_t>(const std::string&)> plan_limit_;
  std::function<Status(const std::string&)> admission_;
  ControllerService* controllers_ = nullptr;
  std::mutex mu_;
  // Held while a retry reads its automation's target and replaces it: two runs that failed on
  // one target make one replacement.
  std::mutex replace_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;                                   // guarded by mu_
  bool woken_ = false;                                      // guarded by mu_
  std::map<std::string, store::RunRecord> active_;          // guarded by mu_; by run id
  std::map<std::string, std::set<std::string>> executing_;  // guarded by mu_; automation -> runs
  std::map<std::string, store::RunRecord> buffered_;        // guarded by mu_; buffer_one's run
  std::set<std::string> cancel_requested_;                  // guarded by mu_
  EventBus* bus_ = nullptr;                                 // set by WatchTargets
  uint64_t bus_token_ = 0;
  std::thread thread_;
};

}  // namespace adapt::core
