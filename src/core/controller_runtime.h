// ControllerRuntime: what a controller (core/controller_service.h) does to its target sandbox.
// The daemon's is SandboxControllerRuntime (core/sandbox_controller_runtime.h), over
// SandboxService; unit tests script a fake one.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "core/controller_decision.h"

namespace adapt::core {

class ControllerRuntime {
 public:
  virtual ~ControllerRuntime() = default;
  // The target's state; found false when it is not a sandbox of `org_id` (or is deleted).
  virtual Result<TargetState> Observe(const std::string& org_id, const std::string& sandbox_id) = 0;
  // Starts the hibernated target (in the background; AwaitRunning follows it). kConflict when
  // its state changed meanwhile.
  virtual Status Start(const std::string& org_id, const std::string& sandbox_id) = 0;
  // Stops the running target as stop_sandbox does (durable: checkpointed, storage kept;
  // instant: its runtime discarded). Blocking. kConflict when its state changed meanwhile;
  // kResourceExhausted when the organization holds all its places of checkpoint work.
  virtual Status Stop(const std::string& org_id, const std::string& sandbox_id) = 0;
  // A fresh instant sandbox with the settings of `sandbox_id` (SandboxService::Replace).
  // Labelled kReplacementLabel = `automation_id` (automation_runner.h), as a retry's is.
  virtual Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id,
                                      const std::string& automation_id) = 0;
  // The replaced target: deleted, best effort.
  virtual void Discard(const std::string& org_id, const std::string& sandbox_id) = 0;
  // Calls `done` once, on any thread, when the sandbox runs (OK) or will not (the reason).
  virtual void AwaitRunning(const std::string& org_id, const std::string& sandbox_id,
                            std::function<void(Status)> done) = 0;
};

}  // namespace adapt::core
