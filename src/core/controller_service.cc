#include "core/controller_service.h"

#include "base/client_message.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"

namespace adapt::core {
namespace {

// As schedules' runs (automation_service.cc): the newest 100 per automation, 30 days.
constexpr int kControllerKeptRuns = 100;
constexpr int64_t kControllerRunRetentionMillis = 30LL * 24 * 3600 * 1000;

bool IsBalanceOrLimit(const Status& st) {
  return st.code() == Code::kPaymentRequired || st.code() == Code::kResourceExhausted;
}

store::RunRecord NewControllerRun(const store::AutomationRecord& a, int64_t now) {
  store::RunRecord r;
  r.id = NewId("run");
  r.org_id = a.org_id;
  r.automation_id = a.id;
  r.trigger = "controller";
  r.sandbox_id = a.sandbox_id;
  r.status = "running";
  r.scheduled_at = r.created_at = r.started_at = now;
  return r;
}

}  // namespace

ControllerService::ControllerService(store::AutomationStore& automations, store::JobStore& runs,
                                     ControllerRuntime& runtime, Clock clock, Executor executor)
    : automations_(automations),
      runs_(runs),
      runtime_(runtime),
      clock_(std::move(clock)),
      executor_(std::move(executor)) {}

ControllerService::~ControllerService() { Shutdown(); }

int64_t ControllerService::Now() const { return clock_ ? clock_() : NowMillis(); }

Result<ControllerWindows> ControllerService::WindowsOf(const store::AutomationRecord& a,
                                                       const FieldNames& names) {
  return ControllerWindows::Of(a.desired_state, a.window_seconds, a.interval_seconds, a.cron,
                               a.time_zone, a.created_at, names);
}

int64_t ControllerService::NextDue(const store::AutomationRecord& a, int64_t now) {
  auto windows = WindowsOf(a);
  if (!windows.ok()) return kControllerNeverDue;
  auto next = windows->NextChangeAfter(now);
  return next ? *next : kControllerNeverDue;
}

void ControllerService::Due(const store::AutomationRecord& a, int64_t now) {
  Status st = automations_.ClaimAutomationSlot(a.id, a.next_due_at, NextDue(a, now), {});
  if (!st.ok()) {
    if (st.code() != Code::kConflict)
      spdlog::error("controllers: moving {}'s due time: {}", a.id, st.message());
    return;
  }
  Post(a.id);
}

void ControllerService::TargetChanged(const std::string& sandbox_id) {
  auto work = [this, sandbox_id] {
    auto all = automations_.ListAutomationsOfSandbox(sandbox_id);
    if (!all.ok()) {
      spdlog::error("controllers: reading {}'s automations: {}", sandbox_id,
                    all.status().message());
      return;
    }
    for (const auto& a : *all)
      if (a.kind == "controller" && a.enabled) Post(a.id);
  };
  if (executor_)
    executor_(std::move(work));
  else
    work();
}

void ControllerService::Watch(EventBus& bus) {
  bus_ = &bus;
  bus_token_ = bus.Subscribe([this](const Change& change) {
    if (change.kind == Change::Kind::kSandboxStatus) TargetChanged(change.id);
  });
}

void ControllerService::Recover(int64_t now) {
  auto due = automations_.MakeControllersDue(now);
  if (!due.ok()) spdlog::error("controllers: making them due: {}", due.status().message());
}

void ControllerService::Shutdown() {
  if (bus_) bus_->Unsubscribe(bus_token_);
  bus_ = nullptr;
  std::lock_guard lock(mu_);
  stopping_ = true;
}

void ControllerService::Post(const std::string& id) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    auto [it, fresh] = reconciling_.try_emplace(id, false);
    if (!fresh) {
      it->second = true;  // the running reconciliation goes round once more
      return;
    }
  }
  auto work = [this, id] {
    for (;;) {
      Reconcile(id);
      std::lock_guard lock(mu_);
      auto it = reconciling_.find(id);
      if (it == reconciling_.end()) return;
      if (!it->second || stopping_) {
        reconciling_.erase(it);
        return;
      }
      it->second = false;
    }
  };
  if (executor_)
    executor_(std::move(work));
  else
    work();
}

void ControllerService::Reconcile(const std::string& id) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
  auto read = automations_.GetAutomation("", id);
  if (!read.ok() || !read->enabled || read->kind != "controller") return;
  const store::AutomationRecord& a = *read;
  int64_t now = Now();
  auto windows = WindowsOf(a);
  if (!windows.ok()) {
    Pause(a, "its windows can no longer be read: " + RecordMessage(windows.status()), now);
    return;
  }
  std::string wanted = windows->StateAt(now);
  auto target = runtime_.Observe(a.org_id, a.sandbox_id);
  if (!target.ok()) {
    spdlog::warn("controllers: reading {}'s sandbox {}: {}", a.id, a.sandbox_id,
                 target.status().message());
    LookAgainAt(a.id, now + kRetryAfterMillis);
    return;
  }
  ControllerDecision d = DecideControllerAction(wanted, a.sandbox_id, *target);
  switch (d.action) {
    case ControllerAction::kNone:
    case ControllerAction::kWait:
      return;
    case ControllerAction::kTargetGone: {
      auto paused = automations_.PauseAutomationsOfSandbox(a.sandbox_id, d.why, now);
      if (!paused.ok()) spdlog::error("controllers: pausing: {}", paused.status().message());
      return;
    }
    case ControllerAction::kStuck: {
      store::RunRecord run = NewControllerRun(a, now);
      run.stdout_text = "pause: wanted " + wanted + "; " + d.why + "\n";
      Finish(a, run, "failed", d.why, /*counted=*/false);
      Pause(a, d.why, now);
      return;
    }
    default:
      Act(a, wanted, d.action, *target, now);
  }
}

void ControllerService::Act(const store::AutomationRecord& a, const std::string& wanted,
                            ControllerAction action, const TargetState& target, int64_t now) {
  const std::string& sbx = a.sandbox_id;
  store::RunRecord run = NewControllerRun(a, now);
  run.stdout_text = std::string(ControllerActionName(action)) + ": sandbox " + sbx + " was " +
                    target.status + ", wanted " + wanted;
  if (action != ControllerAction::kStop && admission_) {
    Status admitted = admission_(a.org_id);
    if (IsBalanceOrLimit(admitted)) {
      Finish(a, run, "skipped_quota", RecordMessage(admitted), /*counted=*/false);
      LookAgainAt(a.id, now + kRetryAfterMillis);
      return;
    }
  }
  if (action == ControllerAction::kStop) {
    Status st = runtime_.Stop(a.org_id, sbx);
    if (st.code() == Code::kConflict) return;  // it changed meanwhile: that change reconciles
    if (st.code() == Code::kResourceExhausted) {
      // The organization's places of checkpoint work are all held: no failure of the target,
      // so nothing is recorded or counted; the stop is tried again later.
      LookAgainAt(a.id, now + kRetryAfterMillis);
      return;
    }
    run.stdout_text += st.ok() ? "; stopped it\n" : "\n";
    Finish(a, run, st.ok() ? "succeeded" : "failed",
           st.ok() ? "" : "stopping the sandbox: " + RecordMessage(st), true);
    return;
  }
  if (action == ControllerAction::kStart) {
    Status st = runtime_.Start(a.org_id, sbx);
    if (st.code() == Code::kConflict) return;
    if (!st.ok()) {
      run.stdout_text += "\n";
      Finish(a, run, IsBalanceOrLimit(st) ? "skipped_quota" : "failed",
             "starting the sandbox: " + RecordMessage(st), !IsBalanceOrLimit(st));
      if (IsBalanceOrLimit(st)) LookAgainAt(a.id, now + kRetryAfterMillis);
      return;
    }
    run.stdout_text += "; started it\n";
    if (Status put = runs_.PutRun(run); !put.ok())
      spdlog::error("controllers: recording run {}: {}", run.id, put.message());
    runtime_.AwaitRunning(a.org_id, sbx, [this, a, run](Status ready) {
      Finish(a, run, ready.ok() ? "succeeded" : "failed",
             ready.ok() ? "" : "the sandbox did not come up: " + RecordMessage(ready), true);
    });
    return;
  }
  // kRecreate: a fresh instant sandbox with the target's settings, followed by every
  // automation of the target.
  auto fresh = runtime_.Replace(a.org_id, sbx, a.id);
  if (!fresh.ok()) {
    const Status& st = fresh.status();
    run.stdout_text += "\n";
    if (st.code() == Code::kNotFound) {
      std::string why = "its sandbox '" + sbx + "' is gone: " + RecordMessage(st);
      auto paused = automations_.PauseAutomationsOfSandbox(sbx, why, now);
      if (!paused.ok()) spdlog::error("controllers: pausing: {}", paused.status().message());
      return;
    }
    Finish(a, run, IsBalanceOrLimit(st) ? "skipped_quota" : "failed",
           "recreating the sandbox: " + RecordMessage(st), !IsBalanceOrLimit(st));
    if (IsBalanceOrLimit(st)) LookAgainAt(a.id, now + kRetryAfterMillis);
    return;
  }
  ADAPT_FAULT_POINT("controller.recreate.after_replace");
  auto moved = automations_.FollowReplacedSandbox(sbx, *fresh, now);
  if (!moved.ok()) {
    runtime_.Discard(a.org_id, *fresh);
    run.stdout_text += "\n";
    Finish(a, run, "failed", "following the new sandbox: " + RecordMessage(moved.status()), true);
    return;
  }
  ADAPT_FAULT_POINT("controller.recreate.after_follow");
  runtime_.Discard(a.org_id, sbx);
  run.sandbox_id = *fresh;
  run.stdout_text += "; recreated it as " + *fresh + ", which its automations now target\n";
  if (Status put = runs_.PutRun(run); !put.ok())
    spdlog::error("controllers: recording run {}: {}", run.id, put.message());
  bool young = target.created_at > 0 && now - target.created_at < kCrashLoopMillis;
  runtime_.AwaitRunning(a.org_id, *fresh, [this, a, run, young](Status ready) {
    Finish(a, run, ready.ok() ? "succeeded" : "failed",
           ready.ok() ? "" : "the new sandbox did not come up: " + RecordMessage(ready), true,
           young);
  });
}

void ControllerService::Finish(const store::AutomationRecord& a, store::RunRecord run,
                               const std::string& status, const std::string& error, bool counted,
                               bool failure) {
  {
    // adaptd stops: a wait cut short says nothing; the next adaptd ends the run.
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
  int64_t now = Now();
  run.status = status;
  run.error = error;
  run.ended_at = now;
  if (Status st = runs_.PutRun(run); !st.ok())
    spdlog::error("controllers: recording run {}: {}", run.id, st.message());
  if (counted) {
    bool failed = failure || status != "succeeded";
    auto after = automations_.RecordAutomationOutcome(
        a.id, failed, kPauseAfterFailures,
        "paused after " + std::to_string(kPauseAfterFailures) + " consecutive failed runs", now);
    if (!after.ok() && after.status().code() != Code::kNotFound)
      spdlog::error("controllers: recording {}'s run: {}", a.id, after.status().message());
  }
  if (status == "failed") LookAgainAt(a.id, now + kRetryAfterMillis);
  if (auto pruned =
          runs_.PruneRuns("", a.id, now - kControllerRunRetentionMillis, kControllerKeptRuns);
      !pruned.ok())
    spdlog::error("controllers: pruning runs: {}", pruned.status().message());
}

void ControllerService::LookAgainAt(const std::string& id, int64_t at) {
  // Twice: the scheduler may move the due time between the read and the claim.
  for (int i = 0; i < 2; ++i) {
    auto a = automations_.GetAutomation("", id);
    if (!a.ok() || !a->enabled || a->next_due_at <= at) return;
    Status st = automations_.ClaimAutomationSlot(id, a->next_due_at, at, {});
    if (st.ok()) {
      if (wake_) wake_();
      return;
    }
    if (st.code() != Code::kConflict) {
      spdlog::error("controllers: moving {}'s due time: {}", id, st.message());
      return;
    }
  }
}

void ControllerService::Pause(const store::AutomationRecord& a, const std::string& why,
                              int64_t now) {
  auto paused = automations_.RecordAutomationOutcome(a.id, true, 1, why, now);
  if (!paused.ok() && paused.status().code() != Code::kNotFound)
    spdlog::error("controllers: pausing {}: {}", a.id, paused.status().message());
}

}  // namespace adapt::core
