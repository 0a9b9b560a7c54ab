// CommandRunner and its sandbox's end (command_runner.h): the reason a command lost with its
// sandbox carries, a runsc exec that could not run a command because the sandbox had stopped
// running or a checkpoint had taken its container away, and an agent's connection dropped by
// the sandbox's end.
#include <chrono>

#include "base/log.h"
#include "core/command_runner.h"
#include "core/command_running.h"
#include "core/sandbox_in_the_way.h"

namespace adapt::core {
namespace {

constexpr char kExecAfterEnd[] =
    "the sandbox stopped running as the command started, so runsc could not run it";
// runsc's own failures (it could not run the command at all) exit with this status.
constexpr int kRunscFailed = 128;
// The shim records a workload's end tens of milliseconds after gVisor stopped it.
constexpr auto kExecEndSettle = std::chrono::seconds(1);

}  // namespace

void CommandRunner::SandboxEnded(const std::string& sandbox_id, const std::string& why,
                                 bool on_its_own) {
  std::vector<Lost> lost;
  {
    std::lock_guard lock(mu_);
    for (const auto& [_, c] : running_) {
      if (c->record.sandbox_id == sandbox_id) {
        ended_[sandbox_id] = why;
        break;
      }
    }
    if (auto it = lost_.find(sandbox_id); it != lost_.end()) {
      lost = std::move(it->second);
      lost_.erase(it);
    }
  }
  if (!on_its_own) return;
  finished_.Forget(sandbox_id);  // what the answers would give is about to change
  auto now = std::chrono::steady_clock::now();
  for (const auto& l : lost) {
    if (now - l.at > kLostWithTheSandbox) continue;  // lost earlier, for another reason
    auto record = store_.GetCommand(l.org_id, sandbox_id, l.id);
    if (!record.ok()) continue;
    record->error = why;
    Status st = store_.PutCommand(*record);
    if (!st.ok()) spdlog::error("command {}: {}", l.id, st.message());
  }
}

std::optional<std::string> CommandRunner::ExecRefusedBySandbox(Running& c) {
  {
    std::lock_guard lock(c.mu);
    if (!c.kill_reason.empty() || !c.fault.empty()) return std::nullopt;
  }
  if (c.exit.signaled() || c.exit.exit_code != kRunscFailed) return std::nullopt;
  auto met = AwaitSandboxInTheWay(store_, runtime_, c.record.org_id, c.record.sandbox_id,
                                  kExecEndSettle, &stopping_);
  if (!met) return std::nullopt;
  if (met->busy_with)
    return "the sandbox was busy with " + *met->busy_with +
           " as the command started, so runsc could not run it";
  return std::string(kExecAfterEnd);
}

std::optional<std::string> CommandRunner::AgentLostWithSandbox(Running& c) {
  {
    std::lock_guard lock(c.mu);
    if (!c.lost_why.empty() || !c.fault.empty()) return std::nullopt;
  }
  {
    std::lock_guard lock(mu_);
    if (ended_.count(c.record.sandbox_id)) return std::nullopt;
  }
  auto met = AwaitSandboxInTheWay(store_, runtime_, c.record.org_id, c.record.sandbox_id,
                                  kExecEndSettle, &stopping_);
  if (!met) return std::nullopt;
  if (met->busy_with)
    return "the sandbox was busy with " + *met->busy_with +
           " while the command ran; its outcome is unknown";
  return "the sandbox stopped running while the command ran (" + met->ended +
         "); its outcome is unknown";
}

}  // namespace adapt::core
