// CommandRunner::FailWatch: where a command's watcher thread lands when it threw, so the
// command's record does not stay "running" (command_runner.h).
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
  if (finished)
    Unregister(c->record.id);  // recorded before it threw; only the runner's entry is left
  else
    Finish(*c);
}

}  // namespace adapt::core
