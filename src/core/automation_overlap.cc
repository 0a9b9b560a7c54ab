// AutomationService's overlap policies (automation_service.h): what a slot does while a run of
// its automation still executes (skip, buffer_one, allow, cancel_previous), the one buffered
// run of buffer_one, and cancel_automation_run for an automation's run.
#include "base/log.h"
#include "core/automation_service.h"

namespace adapt::core {

bool AutomationService::MayStart(const store::AutomationRecord& a, store::RunRecord& run) {
  std::vector<std::string> to_cancel;
  {
    std::lock_guard lock(mu_);
    auto it = executing_.find(a.id);
    if (it == executing_.end() || it->second.empty()) return true;
    if (a.overlap == "allow") {
      // Overlapping, but not without end: each run holds a command, its thread and its
      // sandbox's processes, and runs that never end (sleep 86400) every second would add
      // them without bound.
      if (it->second.size() < kMaxOverlappingRuns) return true;
      run.status = "skipped_overlap";
      run.error = "the automation already has " + std::to_string(kMaxOverlappingRuns) +
                  " runs executing, the most that overlap";
      run.ended_at = run.started_at;
      return false;
    }
    if (a.overlap == "buffer_one" && !buffered_.count(a.id)) {
      // Kept (queued) to start when the executing run ends: the caller records it, then
      // hands it to Buffer.
      run.status = "queued";
      run.started_at = 0;
      return false;
    }
    if (a.overlap == "skip" || a.overlap == "buffer_one") {
      run.status = "skipped_overlap";
      run.error = a.overlap == "skip"
                      ? "a run of this automation was still executing"
                      : "a run of this automation was still executing and another was waiting";
      run.ended_at = run.started_at;
      return false;
    }
    to_cancel.assign(it->second.begin(), it->second.end());
    for (const auto& id : to_cancel) cancel_requested_.insert(id);
  }
  for (const auto& id : to_cancel) runner_.Cancel(id);
  return true;
}

void AutomationService::Buffer(const store::AutomationRecord& a, store::RunRecord run) {
  {
    std::lock_guard lock(mu_);
    auto it = executing_.find(a.id);
    if (it != executing_.end() && !it->second.empty()) {
      if (!buffered_.count(a.id)) {
        buffered_[a.id] = std::move(run);
        return;
      }
      // Another run was buffered meanwhile (a manual run beside a slot): this one is skipped.
      run.status = "skipped_overlap";
      run.error = "a run of this automation was still executing and another was waiting";
      run.ended_at = Now();
    } else {
      // The executing run ended while this one was being recorded: it starts now.
      executing_[a.id].insert(run.id);
    }
  }
  if (run.status == "skipped_overlap") {
    if (Status st = runs_.PutRun(run); !st.ok())
      spdlog::error("automations: recording run {}: {}", run.id, st.message());
    return;
  }
  StartBuffered(std::move(run));
}

void AutomationService::StartBuffered(store::RunRecord run) {
  // The automation as it is now: its target may have moved, it may be paused or deleted.
  auto a = automations_.GetAutomation("", run.automation_id);
  int64_t now = Now();
  if (!a.ok() || !a->enabled) {
    {
      std::lock_guard lock(mu_);
      auto it = executing_.find(run.automation_id);
      if (it != executing_.end() && it->second.erase(run.id) && it->second.empty())
        executing_.erase(it);
    }
    run.status = "cancelled";
    run.error = "the automation was paused or deleted before this buffered run started";
    run.ended_at = now;
    if (Status st = runs_.PutRun(run); !st.ok())
      spdlog::error("automations: recording run {}: {}", run.id, st.message());
    return;
  }
  run.status = "starting";
  run.sandbox_id = a->sandbox_id;
  run.started_at = now;
  if (Status st = runs_.PutRun(run); !st.ok())
    spdlog::error("automations: recording run {}: {}", run.id, st.message());
  Launch(*a, std::move(run));
}

bool AutomationService::CancelRun(const std::string& run_id) {
  std::optional<store::RunRecord> waiting;
  {
    std::lock_guard lock(mu_);
    for (auto it = buffered_.begin(); it != buffered_.end(); ++it) {
      if (it->second.id != run_id) continue;
      waiting = std::move(it->second);
      buffered_.erase(it);
      break;
    }
    if (!waiting) {
      if (!active_.count(run_id)) return false;
      cancel_requested_.insert(run_id);
    }
  }
  if (waiting) {
    // A buffered run never started: it ends cancelled at once.
    waiting->status = "cancelled";
    waiting->error = "cancelled before it started";
    waiting->ended_at = Now();
    if (Status st = runs_.PutRun(*waiting); !st.ok())
      spdlog::error("automations: recording run {}: {}", run_id, st.message());
    return true;
  }
  if (runner_.Cancel(run_id)) return true;
  std::lock_guard lock(mu_);
  cancel_requested_.erase(run_id);
  return false;
}

}  // namespace adapt::core
