// AutomationRunner: executes one run of a schedule against its target sandbox for
// AutomationService, which decides what the run's end means (auto-pause, pause on a lost
// target). The daemon's is SandboxAutomationRunner (core/sandbox_automation_runner.h); unit
// tests script a fake one.
#pragma once

#include <string>
#include <vector>

#include "core/job_attempt.h"
#include "store/automation_store.h"

namespace adapt::core {

class AutomationRunner {
 public:
  virtual ~AutomationRunner() = default;
  // OK when `sandbox_id` is a sandbox of `org_id` a schedule may target (kNotFound otherwise:
  // also while it is being deleted). An empty `org_id`: of any organization.
  virtual Status CheckTarget(const std::string& org_id, const std::string& sandbox_id) = 0;
  // Starts run `run` of `automation` and returns at once; `done` is called exactly once, on
  // another thread. A target that is hibernated is started first and stopped again after the
  // command. kRefused with the error "target not found" when the target is gone.
  virtual void Start(const store::AutomationRecord& automation, const store::RunRecord& run,
                     JobAttempts::Progress progress, JobAttempts::Done done) = 0;
  // Takes over run `run` of `automation` that a previous adaptd left running (its sandbox_id
  // and command_id recorded) and returns at once; `done` is called exactly once, on another
  // thread, as Start's would be: the command followed to its end, the target stopped again if
  // this run had started it. A command the target's agent no longer runs, or a target gone,
  // ends kInfrastructure. Cancel works on it as on any run.
  virtual void Reattach(const store::AutomationRecord& automation, const store::RunRecord& run,
                        JobAttempts::Done done) = 0;
  // Asks run `run_id` to end (its command's process group gets SIGTERM, then SIGKILL after the
  // cancel grace period); false when it does not run here.
  virtual bool Cancel(const std::string& run_id) = 0;
  // For a retry after an infrastructure failure: a fresh sandbox with the settings of instant
  // target `sandbox_id` (its TTL's deadline kept), whose id is returned, labelled
  // kReplacementLabel = `automation_id` and kReplacedLabel = `sandbox_id`. kConflict for a
  // durable target (its storage cannot move), kNotFound for one deleted or expired.
  virtual Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id,
                                      const std::string& automation_id) = 0;
  // The sandboxes (not deleted) that carry kReplacementLabel, for Recover: one that no
  // automation follows was left by a crash between its Replace and the follow, or between the
  // follow and the Discard of the target it replaced.
  struct Replacement {
    std::string org_id, sandbox_id, automation_id;
    // The target it replaced while that one is neither deleted nor being deleted; else "".
    std::string replaced_id;
  };
  virtual Result<std::vector<Replacement>> Replacements() = 0;
  // The target a replacement took over from: deleted, best effort.
  virtual void Discard(const std::string& org_id, const std::string& sandbox_id) = 0;
};

inline constexpr const char* kTargetNotFound = "target not found";
// The reserved label of a sandbox made to replace an automation's (or a controller's) target:
// the automation's id.
inline constexpr const char* kReplacementLabel = "platform.automation";
// And the id of the target it replaced, whose delete a crash may have cut short.
inline constexpr const char* kReplacedLabel = "platform.replaces";

}  // namespace adapt::core
