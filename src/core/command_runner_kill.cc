// How CommandRunner ends a command before it exits (command_runner.h): a kill asked for, with
// or without a grace, and the command's own timeout, each a SIGTERM first and a SIGKILL once
// the grace is over, sent by the command's watcher as NextSignalLocked says.
#include <signal.h>

#include <algorithm>
#include <chrono>

#include "core/command_runner.h"
#include "core/command_running.h"

namespace adapt::core {

bool CommandRunner::Kill(const std::string& id, std::chrono::milliseconds grace) {
  std::shared_ptr<Running> c;
  {
    std::lock_guard lock(mu_);
    auto it = running_.find(id);
    if (it == running_.end()) return false;
    c = it->second;
  }
  std::lock_guard lock(c->mu);
  auto due = std::chrono::steady_clock::now() + std::max(grace, std::chrono::milliseconds(0));
  if (c->kill_reason.empty()) {
    c->kill_reason = "killed";
    c->kill_at = due;
  } else if (due < c->kill_at) {
    c->kill_at = due;  // a plain kill during a graceful one's grace: SIGKILL now
  }
  c->cv.notify_all();
  return true;
}

int CommandRunner::NextSignalLocked(Running& c) {
  auto now = std::chrono::steady_clock::now();
  if (c.kill_reason.empty() && now >= c.deadline) {
    c.kill_reason = "timeout";
    c.kill_at = now;
  }
  if (c.kill_reason.empty() || c.kill_sent) return 0;
  if (now >= c.kill_at) {
    c.kill_sent = true;
    return SIGKILL;
  }
  if (c.term_sent) return 0;
  c.term_sent = true;
  return SIGTERM;
}

}  // namespace adapt::core
