#include "core/sandbox_in_the_way.h"

#include <thread>

#include "core/sandbox_operations.h"

namespace adapt::core {

std::optional<SandboxInTheWay> AwaitSandboxInTheWay(store::Store& store, runtime::Runtime& runtime,
                                                    const std::string& org_id,
                                                    const std::string& sandbox_id,
                                                    std::chrono::milliseconds settle,
                                                    const std::atomic<bool>* stopping) {
  const auto until = std::chrono::steady_clock::now() + settle;
  for (;;) {
    if (auto doing = CheckpointWorkUnderWay(store, sandbox_id)) return SandboxInTheWay{doing, ""};
    auto r = store.GetSandbox(org_id, sandbox_id);
    if (r.ok() && r->status != "running")
      return SandboxInTheWay{std::nullopt, "it is " + r->status + " now"};
    auto seen = runtime.Observe(sandbox_id);
    // No runtime state at all: its compute is gone (deleted).
    if ((seen.ok() && seen->state.phase == runtime::ShimPhase::kExited) ||
        (!seen.ok() && seen.status().code() == Code::kNotFound))
      return SandboxInTheWay{std::nullopt, "its workload ended"};
    if ((stopping && *stopping) || std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace adapt::core
