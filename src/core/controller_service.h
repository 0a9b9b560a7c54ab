// ControllerService: the desired-state controllers among an organization's automations (seed
// 000's "desired-state SandboxController", kind "controller"; AutomationService creates, lists,
// pauses and deletes them as it does schedules). A controller holds its target sandbox in a
// state, running or hibernated, or changes it by windows (core/controller_window.h).
//
// It is event-driven: a status change of a target (the EventBus) reconciles that target's
// controllers, and a window's opening or closing is the controller's next_due_at, which
// AutomationService's scheduler sleeps until and hands over (Due). A reconciliation reads the
// target and acts (core/controller_decision.h): starts it, stops it (durable: hibernated with
// its storage, as stop_sandbox does), recreates an instant target that failed (the
// controller, and every automation of that target, follow the new sandbox), or pauses the
// controller with a reason when nothing it may do helps. Each action is a run with trigger
// controller (its output says what it did); an action that fails is tried again after a
// minute, and kPauseAfterFailures failed ones in a row pause the controller. On a priced plan
// at a balance of 0 or less, a start or a recreation is a skipped_quota run instead. Reconciles
// of one controller never overlap. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/controller_runtime.h"
#include "core/controller_window.h"
#include "core/event_bus.h"
#include "store/automation_store.h"
#include "store/job_store.h"

namespace adapt::core {

// The next_due_at of a controller with nothing due (no windows).
inline constexpr int64_t kControllerNeverDue = std::numeric_limits<int64_t>::max();

class ControllerService {
 public:
  static constexpr int kPauseAfterFailures = 5;
  static constexpr int64_t kRetryAfterMillis = 60'000;
  // A recreation of a target younger than this counts as a failed run toward the auto-pause:
  // a sandbox that keeps failing pauses its controller instead of being remade forever.
  static constexpr int64_t kCrashLoopMillis = 10 * 60'000;
  using Clock = std::function<int64_t()>;                       // ms since the epoch
  using Executor = std::function<void(std::function<void()>)>;  // runs work elsewhere

  ControllerService(store::AutomationStore& automations, store::JobStore& runs,
                    ControllerRuntime& runtime, Clock clock = {}, Executor executor = {});
  ~ControllerService();

  // As AutomationService's: kPaymentRequired or kResourceExhausted makes a start or a
  // recreation skipped_quota. Set before serving.
  void set_run_admission(std::function<Status(const std::string& org_id)> admission) {
    admission_ = std::move(admission);
  }
  // Called when a controller's next_due_at moved earlier (the scheduler sleeps until it).
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

  // The windows of controller `a` (its stored fields).
  static Result<ControllerWindows> WindowsOf(const store::AutomationRecord& a,
                                             const FieldNames& names = {});
  // Its next due time after `now`: the next change of its windows, or kControllerNeverDue.
  static int64_t NextDue(const store::AutomationRecord& a, int64_t now);

  // The scheduler found controller `a` due at `now`: its next due time is claimed, then it is
  // reconciled (through the executor).
  void Due(const store::AutomationRecord& a, int64_t now);
  // Reconciles the controllers targeting `sandbox_id` (through the executor).
  void TargetChanged(const std::string& sandbox_id);
  // Listens to sandbox status changes on `bus` (TargetChanged). Call once, before serving.
  void Watch(EventBus& bus);
  // adaptd starts: every enabled controller becomes due now. Before the scheduler starts.
  void Recover(int64_t now);
  void Shutdown();
  // One reconciliation of controller `id` now, on this thread.
  void Reconcile(const std::string& id);

 private:
  int64_t Now() const;
  void Post(const std::string& id);
  void Act(const store::AutomationRecord& a, const std::string& wanted, ControllerAction action,
           const TargetState& target, int64_t now);
  // Records `run` ended with `status` and `error`, counts it toward the auto-pause unless
  // `counted` is false, and after a failure looks again in kRetryAfterMillis.
  void Finish(const store::AutomationRecord& a, store::RunRecord run, const std::string& status,
              const std::string& error, bool counted, bool failure = false);
  void LookAgainAt(const std::string& id, int64_t at);
  void Pause(const store::AutomationRecord& a, const std::string& why, int64_t now);

  store::AutomationStore& automations_;
  store::JobStore& runs_;
  ControllerRuntime& runtime_;
  Clock clock_;
  Executor executor_;
  std::function<Status(const std::string&)> admission_;
  std::function<void()> wake_;
  std::mutex mu_;
  bool stopping_ = false;                    // guarded by mu_
  std::map<std::string, bool> reconciling_;  // guarded by mu_; id -> asked again meanwhile
  EventBus* bus_ = nullptr;
  uint64_t bus_token_ = 0;
};

}  // namespace adapt::core
