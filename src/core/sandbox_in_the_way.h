// What a command or file operation that failed inside a sandbox met, when it was the sandbox
// and not a fault of adaptd's: a named checkpoint or roll back taking its container away, or
// the sandbox having stopped running (its startup command ended, it was stopped or deleted).
// runsc exec then fails ("loading sandbox", "cannot execute in container in state stopped")
// and the agent's connection drops, which alone look like adaptd's own failures.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "runtime/runtime.h"
#include "store/store.h"

namespace adapt::core {

struct SandboxInTheWay {
  // Set: the checkpoint work under way, "its checkpoint operation op_...".
  std::optional<std::string> busy_with;
  // Else why it no longer runs: "it is completed now", "its workload ended".
  std::string ended;
};

// Looks until `settle` has passed (the shim records a workload's end tens of milliseconds
// after gVisor stopped it), or `stopping` is set. Unset: the sandbox runs on, untouched.
std::optional<SandboxInTheWay> AwaitSandboxInTheWay(store::Store& store, runtime::Runtime& runtime,
                                                    const std::string& org_id,
                                                    const std::string& sandbox_id,
                                                    std::chrono::milliseconds settle,
                                                    const std::atomic<bool>* stopping = nullptr);

}  // namespace adapt::core
