// AutomationService's recovery after an adaptd restart (automation_service.h): runs whose
// command the previous adaptd started are followed to their end through the target's agent,
// as if nothing happened; the others end infrastructure_failed, not retried: a retry would
// replace an instant target that is healthy, its files lost, for a restart of adaptd.
#include "base/log.h"
#include "core/automation_service.h"
#include "core/controller_service.h"

namespace adapt::core {
namespace {

const std::vector<std::string> kAutomationRunsExecuting = {"queued", "starting", "running"};

}  // namespace

void AutomationService::Recover() {
  int64_t now = Now();
  auto runs = runs_.ListRunsWithStatus(kAutomationRunsExecuting);
  if (!runs.ok()) {
    spdlog::error("automations: listing runs to recover: {}", runs.status().message());
  } else {
    for (auto run : *runs) {
      if (run.automation_id.empty()) continue;
      if (run.trigger != "controller" && run.status == "running" && !run.sandbox_id.empty() &&
          !run.command_id.empty()) {
        Reattach(std::move(run));
        continue;
      }
      run.error = run.status == "queued"
                      ? "adaptd restarted before this buffered run started; it is not retried"
                      : "adaptd restarted while the run was executing; it is not retried";
      run.status = "infrastructure_failed";
      if (run.trigger == "controller")
        run.error = "adaptd restarted during the action; the controller looks again";
      run.ended_at = now;
      if (Status st = runs_.PutRun(run); !st.ok())
        spdlog::error("automations: recording run {}: {}", run.id, st.message());
    }
  }
  DiscardUnfollowedReplacements();
  if (controllers_) controllers_->Recover(now);
}

void AutomationService::DiscardUnfollowedReplacements() {
  auto replacements = runner_.Replacements();
  if (!replacements.ok()) {
    spdlog::error("automations: listing replacement sandboxes: {}",
                  replacements.status().message());
    return;
  }
  for (const auto& r : *replacements) {
    auto a = automations_.GetAutomation(r.org_id, r.automation_id);
    // An automation deleted since leaves its sandbox to its organization, as any delete does.
    if (!a.ok()) continue;
    if (a->sandbox_id != r.sandbox_id) {
      spdlog::info(
          "automations: deleting {}, made to replace a target of {}, which does not follow it",
          r.sandbox_id, r.automation_id);
      runner_.Discard(r.org_id, r.sandbox_id);
      continue;
    }
    // Followed: the target it replaced goes, as the retry would have deleted it, unless an
    // automation targets it still.
    if (r.replaced_id.empty()) continue;
    auto following = automations_.ListAutomationsOfSandbox(r.replaced_id);
    if (!following.ok() || !following->empty()) continue;
    spdlog::info("automations: deleting {}, which {} replaced for {}", r.replaced_id, r.sandbox_id,
                 r.automation_id);
    runner_.Discard(r.org_id, r.replaced_id);
  }
}

void AutomationService::Reattach(store::RunRecord run) {
  store::AutomationRecord a;
  if (auto read = automations_.GetAutomation(run.org_id, run.automation_id); read.ok()) {
    a = *read;
  } else {
    // Deleted meanwhile (a delete never stops a run): the run still ends as it would have,
    // and is not retried.
    a.id = run.automation_id;
    a.org_id = run.org_id;
    a.sandbox_id = run.sandbox_id;
    a.max_attempts = 1;
  }
  // Executing, as before the restart: the overlap policy applies to slots due meanwhile.
  {
    std::lock_guard lock(mu_);
    active_[run.id] = run;
    executing_[a.id].insert(run.id);
  }
  spdlog::info("automations: following run {} of {} again (command {})", run.id, a.id,
               run.command_id);
  std::string run_id = run.id;
  runner_.Reattach(a, run,
                   [this, a, run_id](AttemptEnd end) { RunEnded(a, run_id, std::move(end)); });
}

}  // namespace adapt::core
