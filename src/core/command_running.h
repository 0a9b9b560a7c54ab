// CommandRunner::Running: one command's state while it runs, shared by the runner's files
// (command_runner.cc, command_runner_fault.cc). Private to CommandRunner.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "core/command_runner.h"
#include "os/process.h"

namespace adapt::core {

// A command lost with its agent while its sandbox kept running (as far as anyone knows).
// How long before its sandbox's death is known a lost command counts as lost with it: the
// sandbox's monitor notices the death within a second or so of the agent's connection closing.
inline constexpr auto kLostWithTheSandbox = std::chrono::seconds(30);

struct CommandRunner::Running {
  store::CommandRecord record;
  std::vector<std::string> secrets;
  std::chrono::steady_clock::time_point deadline;
  // Served by runsc exec: the runsc process and its pipes.
  runtime::ExecProcess process;
  std::atomic<bool> exited{false};
  os::ExitStatus exit;
  // Served by the agent (also while a re-attach waits for it: `agent` is null then).
  bool via_agent = false;
  std::shared_ptr<runtime::AgentSession> agent;
  uint32_t channel = 0;

  std::mutex mu;
  std::condition_variable cv;  // output, exit, kill request, end
  // Guarded by mu.
  std::string out, err;
  uint64_t out_total = 0, err_total = 0;  // bytes ever written to each stream
  bool truncated = false;
  std::string kill_reason;  // "killed" or "timeout" once asked
  // When SIGKILL is due once a kill was asked: at once, or after a graceful kill's grace
  // period (SIGTERM to the process group first).
  std::chrono::steady_clock::time_point kill_at;
  bool term_sent = false;
  bool kill_sent = false;
  bool agent_exited = false;
  runtime::AgentExit agent_exit;
  bool finished = false;  // the final record is in `record`
  std::string lost_why;   // why it is lost, when known before Finish
  // Where SaveOutput left off: the streams' totals it wrote, and when.
  uint64_t saved_out_total = 0, saved_err_total = 0;
  std::chrono::steady_clock::time_point saved_at;
  // Served by the agent: how far each stream's record is durable, as the agent was told
  // (agent::FrameType::kAck), in out_total's and err_total's count.
  uint64_t acked_out = 0, acked_err = 0;
  ActivityHold busy;  // its sandbox is in use while it runs (idle_tracker.h)
  // Why its watcher thread failed (it threw): Finish then records the command lost with it.
  std::string fault;
};

}  // namespace adapt::core
