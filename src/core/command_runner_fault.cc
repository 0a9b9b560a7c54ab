// CommandRunner::FailWatch: where a command's watcher thread lands when it threw, so the
// command's record does not stay "running" (command_runner.h).
#include <csignal>

#include "base/ignore_error.h"
#include "core/command_runner.h"
#include "core/command_running.h"

namespace adapt::core {

void CommandRunner::FailWatch(const std::shared_ptr<Running>& c, const std::string& error) {
  bool finished = false;
  {
    std::lock_guard lock(c->mu);
    finished = c->finished;
    if (!finished)
      c->fault = "adaptd stopped following the command (" + error + "); its outcome is unknown";
  }
  if (finished) {
    Unregister(c->record.id);  // recorded before it threw; only the runner's entry is left
    return;
  }
  // Nothing follows the command any more, so nothing could kill it at its timeout or on a
  // user's request: it ends here, as a lost command's would with its sandbox.
  KillUnfollowed(*c);
  Finish(*c);
}

void CommandRunner::KillUnfollowed(Running& c) {
  if (c.via_agent) {
    std::shared_ptr<runtime::AgentSession> agent;
    {
      std::lock_guard lock(c.mu);
      if (!c.agent_exited) agent = c.agent;
    }
    // To the command's process group, as a kill asked for goes.
    if (agent) IgnoreError(agent->Signal(c.channel, SIGKILL), "the command may have just ended");
    return;
  }
  if (c.exited) return;
  IgnoreError(runtime_.KillExec(c.record.sandbox_id, c.process.tree_id),
              "the command may have just ended");
  IgnoreError(os::Signal(c.process.pid, SIGKILL), "runsc exec may have just exited");
}

}  // namespace adapt::core
