// SandboxControllerRuntime: the daemon's ControllerRuntime, over SandboxService: a controller
// starts, stops and replaces its target as the owner's own calls would (limits, balance and
// the durable checkpoint apply alike). Waits park on the Waiter. Thread-safe.
#pragma once

#include <chrono>

#include "core/automation_runner.h"
#include "core/controller_runtime.h"
#include "core/sandbox_service.h"

namespace adapt::core {

class SandboxControllerRuntime : public ControllerRuntime {
 public:
  static constexpr std::chrono::minutes kStartWait{5};

  explicit SandboxControllerRuntime(SandboxService& sandboxes) : sandboxes_(sandboxes) {}

  Result<TargetState> Observe(const std::string& org_id, const std::string& sandbox_id) override;
  Status Start(const std::string& org_id, const std::string& sandbox_id) override;
  Status Stop(const std::string& org_id, const std::string& sandbox_id) override;
  Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id,
                              const std::string& automation_id) override;
  void Discard(const std::string& org_id, const std::string& sandbox_id) override;
  void AwaitRunning(const std::string& org_id, const std::string& sandbox_id,
                    std::function<void(Status)> done) override;

 private:
  SandboxService& sandboxes_;
};

}  // namespace adapt::core
