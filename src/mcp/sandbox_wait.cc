// The wait for a starting sandbox that wait_for_sandbox, create_sandbox and start_sandbox
// share, parked on the core's Waiter (SandboxService::AwaitSettled): it wakes when the
// sandbox's status changes, reports progress each second, and ends early when the client
// cancels the call.
#include <chrono>

#include "mcp/sandbox_summary.h"

namespace adapt::mcp {

void WaitForSandboxReadyLater(core::SandboxService& sandboxes, ToolContext& ctx,
                              const std::string& id, int seconds,
                              std::function<void(Result<core::Sandbox>)> done) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  core::Waiter::Ticks ticks{std::chrono::seconds(1), std::chrono::seconds(1),
                            [progress = ctx.progress, start, seconds, id] {
                              progress(std::chrono::duration<double>(Clock::now() - start).count(),
                                       seconds, "sandbox " + id + " is still starting");
                            }};
  auto wait = sandboxes.AwaitSettled(
      ctx.who, id, start + std::chrono::seconds(seconds),
      [&sandboxes, who = ctx.who, id, done](core::Waiter::End) { done(sandboxes.Get(who, id)); },
      std::move(ticks));
  ctx.cancelled->OnSet([wait] { wait.Cancel(); });
}

}  // namespace adapt::mcp
