#include "core/command_runner.h"

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "base/background_work.h"
#include "base/fault_point.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/redaction.h"
#include "base/text.h"
#include "base/time.h"
#include "core/command_running.h"
#include "os/process.h"
#include "os/timed_io.h"

namespace adapt::core {

namespace {

// Runs `start`, which starts a detached thread, and says why when the host gave no thread
// (std::thread throws std::system_error at its thread limit or out of memory): the command
// is registered by then, and must end rather than stay "running" with nothing to end it.
template <typename Start>
std::optional<std::string> NoThread(Start start) {
  try {
    start();
    return std::nullopt;
  } catch (const std::system_error& e) {
    return std::string("no thread could be started for it: ") + e.what();
  }
}

constexpr char kAgentGone[] =
    "the connection to the sandbox's agent was lost while the command ran; its outcome is unknown";

// Appends to a stream's tail, keeping at least the latest kKeptBytesPerStream bytes while
// bounding memory to twice that.
void KeepTail(std::string& buffer, uint64_t& total, std::string_view data, bool& truncated) {
  constexpr size_t kKeep = CommandRunner::kKeptBytesPerStream;
  buffer.append(data);
  total += data.size();
  if (buffer.size() > 2 * kKeep) {
    buffer.erase(0, buffer.size() - kKeep);
    truncated = true;
  }
}

}  // namespace

CommandRunner::CommandRunner(store::Store& store, runtime::Runtime& runtime)
    : store_(store), runtime_(runtime) {}

CommandRunner::~CommandRunner() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  for (auto& [_, c] : running_) {
    if (c->via_agent) {
      std::lock_guard clock(c->mu);
      c->cv.notify_all();
    } else {
      IgnoreError(os::Signal(c->process.pid, SIGKILL), "the process may have just exited");
    }
  }
  changed_.wait(lock, [&] { return threads_ == 0; });
}

std::shared_ptr<CommandRunner::Running> CommandRunner::Register(store::CommandRecord record,
                                                                int timeout_seconds,
                                                                std::vector<std::string> secrets) {
  auto c = std::make_shared<Running>();
  c->record = std::move(record);
  c->secrets = std::move(secrets);
  c->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  // The first save is a kSaveInterval after the start: a short command's output is written
  // once, with its end (saving it when it came cost each such command a third durable write).
  c->saved_at = std::chrono::steady_clock::now();
  c->busy = ActivityHold(activity_, c->record.sandbox_id);
  std::lock_guard lock(mu_);
  running_[c->record.id] = c;
  threads_ += 1;
  return c;
}

bool CommandRunner::IsRunning(const std::string& id) {
  std::lock_guard lock(mu_);
  return running_.count(id) > 0;
}

void CommandRunner::Unregister(const std::string& id) {
  {
    ActivityHold ended;  // released once the lock is
    std::lock_guard lock(mu_);
    auto it = running_.find(id);
    if (it != running_.end()) {
      ended = std::move(it->second->busy);
      std::string sandbox_id = it->second->record.sandbox_id;
      running_.erase(it);
      bool more = false;
      for (const auto& [_, other] : running_) more = more || other->record.sandbox_id == sandbox_id;
      if (!more) ended_.erase(sandbox_id);
    }
  }
  // Once the lock is released: a waiter's check calls back into the runner.
  if (bus_) bus_->Notify({Change::Kind::kCommandEnded, id});
  // Last: the destructor waits for this, so nothing of the runner is touched after it.
  std::lock_guard lock(mu_);
  threads_ -= 1;
  changed_.notify_all();
}

void CommandRunner::Start(store::CommandRecord record, runtime::ExecProcess process,
                          std::string stdin_data, int timeout_seconds,
                          std::vector<std::string> secrets) {
  auto c = Register(std::move(record), timeout_seconds, std::move(secrets));
  c->process = std::move(process);
  // The process may never read its stdin: a writer of its own keeps the watcher free.
  auto in = std::make_shared<os::UniqueFd>(std::move(c->process.stdin_fd));
  if (stdin_data.empty()) {
    in->reset();
  } else {
    // Until the command's own deadline at most: a process that never reads its stdin (or a
    // child of it in the background that holds it) would keep this thread and the bytes.
    auto until = c->deadline;
    auto write = [in, until, data = std::move(stdin_data)] {
      IgnoreError(os::WriteAllBefore(in->get(), data, until),
                  "the command closed its stdin or took none of it in time");
      in->reset();
    };
    // Without a thread its stdin closes (the writer goes with its bytes), as one never read.
    if (auto why = NoThread([&] {
          std::thread(Guarded("command " + c->record.id + ": writing its stdin", std::move(write)))
              .detach();
        }))
      spdlog::warn("command {}: its stdin is closed unwritten: {}", c->record.id, *why);
  }
  if (auto why = NoThread([&] {
        std::thread(Guarded(
                        "command " + c->record.id, [this, c] { Watch(c); },
                        [this, c](const std::string& error) { FailWatch(c, error); }))
            .detach();
      })) {
    FailWatch(c, *why);
    // The watcher reaps `runsc exec`; killed just now, it ends at once.
    IgnoreError(os::Wait(c->process.pid).status(), "the killed runsc exec was reaped already");
  }
}

namespace {

// The callbacks hold the command, not the runner: the session may outlive the runner.
runtime::AgentCallbacks CallbacksFor(const std::shared_ptr<CommandRunner::Running>& c) {
  runtime::AgentCallbacks cb;
  cb.output = [c](int stream, std::string_view data) {
    std::lock_guard lock(c->mu);
    if (stream == 1)
      KeepTail(c->out, c->out_total, data, c->truncated);
    else
      KeepTail(c->err, c->err_total, data, c->truncated);
    c->cv.notify_all();
  };
  cb.exit = [c](const runtime::AgentExit& e) {
    std::lock_guard lock(c->mu);
    c->agent_exit = e;
    c->agent_exited = true;
    c->cv.notify_all();
  };
  return cb;
}

}  // namespace

Status CommandRunner::StartViaAgent(store::CommandRecord record,
                                    std::shared_ptr<runtime::AgentSession> agent,
                                    agent::SpawnRequest spawn, std::string stdin_data,
                                    int timeout_seconds, std::vector<std::string> secrets) {
  auto c = Register(std::move(record), timeout_seconds, std::move(secrets));
  c->via_agent = true;
  c->agent = agent;
  // A later adaptd finds the command by its id in the agent's hello.
  spawn.tag = c->record.id;
  runtime::AgentCallbacks cb = CallbacksFor(c);
  spawn.has_stdin = !stdin_data.empty();
  auto channel = agent->Spawn(spawn, std::move(cb));
  if (!channel.ok()) {
    Unregister(c->record.id);
    return channel.status();
  }
  {
    std::lock_guard lock(c->mu);
    c->channel = *channel;
  }
  if (spawn.has_stdin) {
    // On a thread of its own, not the caller's (an API worker): the sandbox's root can have the
    // agent take its stdin as slowly as SendStdin's limit allows.
    auto send = [agent, channel = *channel, data = std::move(stdin_data)] {
      // Failure means the connection dropped: the exit callback reports the command lost.
      if (agent->SendStdin(channel, data).ok())
        IgnoreError(agent->SendStdin(channel, ""), "the exit callback reports a lost command");
    };
    if (auto why = NoThread([&] {
          std::thread(Guarded("command " + c->record.id + ": sending its stdin", std::move(send)))
              .detach();
        }))
      spdlog::warn("command {}: its stdin is closed unsent: {}", c->record.id, *why);
  }
  if (auto why = NoThread([&] {
        std::thread(Guarded(
                        "command " + c->record.id, [this, c] { WatchAgent(c); },
                        [this, c](const std::string& error) { FailWatch(c, error); }))
            .detach();
      }))
    FailWatch(c, *why);
  return Status::Ok();
}

void CommandRunner::Reattach(store::CommandRecord record, std::vector<std::string> secrets,
                             std::chrono::milliseconds wait) {
  int64_t timeout_ms = record.timeout_seconds * int64_t{1000};
  int64_t left_ms = std::max<int64_t>(0, record.created_at + timeout_ms - NowMillis());
  auto c = Register(std::move(record), 0, std::move(secrets));
  c->via_agent = true;
  c->deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(left_ms);
  // What the previous adaptd saved comes first (already UTF-8 and redacted; both stay so).
  // What it received after its last save is not there: the agent, which was not told it is
  // recorded (agent::FrameType::kAck), sends it again with what came since.
  c->out = c->record.stdout_text;
  c->err = c->record.stderr_text;
  c->acked_out = c->saved_out_total = c->out_total = c->out.size();
  c->acked_err = c->saved_err_total = c->err_total = c->err.size();
  c->truncated = c->record.truncated;
  if (auto why = NoThread([&] {
        std::thread(Guarded(
                        "command " + c->record.id, [this, c, wait] { ReattachAndWatch(c, wait); },
                        [this, c](const std::string& error) { FailWatch(c, error); }))
            .detach();
      }))
    FailWatch(c, *why);
}

void CommandRunner::ReattachAndWatch(std::shared_ptr<Running> c, std::chrono::milliseconds wait) {
  auto until = std::chrono::steady_clock::now() + wait;
  std::shared_ptr<runtime::AgentSession> agent;
  // The agent reconnects within a second or so of adaptd listening again.
  while (!stopping_ && !(agent = runtime_.Agent(c->record.sandbox_id)) &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (agent) {
    {
      std::lock_guard lock(c->mu);
      c->agent = agent;
    }
    auto channel = agent->Attach(c->record.id, CallbacksFor(c));
    if (channel.ok()) {
      {
        std::lock_guard lock(c->mu);
        c->channel = *channel;
      }
      spdlog::info("command {}: attached again to the sandbox's agent", c->record.id);
      WatchAgent(c);
      return;
    }
    spdlog::info("command {}: {}", c->record.id, channel.status().message());
  }
  {
    std::lock_guard lock(c->mu);
    c->agent_exit.lost = true;
    c->agent_exited = true;
    c->lost_why = agent ? "adaptd restarted while the command ran and the sandbox's agent no "
                          "longer runs it; its outcome is unknown"
                        : "adaptd restarted while the command ran and the sandbox's agent did "
                          "not connect again; its outcome is unknown";
  }
  Finish(*c);
}

void CommandRunner::WatchAgent(std::shared_ptr<Running> c) {
  std::unique_lock lock(c->mu);
  while (!c->agent_exited && !stopping_) {
    if (int sig = NextSignalLocked(*c)) {
      lock.unlock();
      // To the command's process group: its whole tree.
      Status st = c->agent->Signal(c->channel, sig);
      if (!st.ok()) spdlog::warn("command {}: {}", c->record.id, st.message());
      lock.lock();
      continue;
    }
    // New output is saved now if the last save is old enough, else once it is.
    bool unsaved = c->out_total != c->saved_out_total || c->err_total != c->saved_err_total;
    auto save_at = c->saved_at + kSaveInterval;
    if (unsaved && std::chrono::steady_clock::now() >= save_at) {
      lock.unlock();
      SaveOutput(*c);
      lock.lock();
      continue;
    }
    // A graceful kill in its grace period wakes for its SIGKILL; once that is sent, for the
    // end of the wait for its exit (the deadline may be long past: waiting on it would spin).
    bool graceful = !c->kill_reason.empty() && !c->kill_sent;
    auto wake = graceful ? c->kill_at : c->deadline;
    if (c->kill_sent) {
      auto give_up = c->kill_at + unanswered_kill_limit_;
      if (std::chrono::steady_clock::now() >= give_up) {
        c->agent_exit.lost = true;
        c->agent_exited = true;
        c->lost_why = "the sandbox's agent did not report the command's end within " +
                      std::to_string(unanswered_kill_limit_.count() / 1000) +
                      " s of its SIGKILL; its outcome is unknown";
        break;
      }
      wake = give_up;
    }
    if (unsaved) wake = std::min(wake, save_at);
    c->cv.wait_until(lock, wake);
  }
  lock.unlock();
  Finish(*c);
}

void CommandRunner::Watch(std::shared_ptr<Running> c) {
  // Detached, not joined: it owns what it touches, and a joinable thread left by an exception
  // in the loop below would end the process. The loop ends only once it saw `exited`.
  std::thread(Guarded("command " + c->record.id + ": waiting for its process", [c] {
    auto st = os::Wait(c->process.pid);
    if (st.ok()) c->exit = *st;
    c->exited = true;
  })).detach();
  std::vector<os::UniqueFd*> fds = {&c->process.stdout_fd, &c->process.stderr_fd};
  char buf[65536];
  bool drained_after_exit = false;
  std::optional<std::chrono::steady_clock::time_point> drain_until;
  while (!drained_after_exit) {
    bool exited = c->exited;
    // After the exit, what is already there is read for a while, not for as long as more
    // comes: a background child that writes without pause would keep the command running.
    if (exited && !drain_until) drain_until = std::chrono::steady_clock::now() + kDrainAfterExit;
    if (exited && std::chrono::steady_clock::now() >= *drain_until) break;
    std::vector<int> open;
    for (auto* f : fds) open.push_back(f->get());
    // After the exit, read what is already there: a background child may keep the pipes open.
    auto ready = os::WaitReadable(open, exited ? 0 : 100);
    bool any = false;
    for (size_t i = 0; ready.ok() && i < fds.size(); ++i) {
      if (open[i] < 0 || !(*ready)[i]) continue;
      auto n = os::ReadSome(open[i], buf, sizeof buf);
      if (!n.ok() || *n == 0) {
        fds[i]->reset();
        continue;
      }
      any = true;
      std::lock_guard lock(c->mu);
      if (i == 0)
        KeepTail(c->out, c->out_total, std::string_view(buf, *n), c->truncated);
      else
        KeepTail(c->err, c->err_total, std::string_view(buf, *n), c->truncated);
      c->cv.notify_all();
    }
    if (exited && !any) drained_after_exit = true;
    int sig = 0;
    if (!exited) {
      std::lock_guard lock(c->mu);
      sig = NextSignalLocked(*c);
    }
    if (stopping_) break;
    if (sig == SIGTERM) {
      Status st = runtime_.TerminateExec(c->record.sandbox_id, c->process.tree_id);
      if (!st.ok()) spdlog::warn("command {}: {}", c->record.id, st.message());
    } else if (sig == SIGKILL) {
      Status st = runtime_.KillExec(c->record.sandbox_id, c->process.tree_id);
      if (!st.ok()) {
        spdlog::warn("command {}: {}", c->record.id, st.message());
        IgnoreError(os::Signal(c->process.pid, SIGKILL), "the process may have just exited");
      }
    }
    if (!exited && fds[0]->get() < 0 && fds[1]->get() < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!c->exited)
    IgnoreError(os::Signal(c->process.pid, SIGKILL), "the process may have just exited");
  Finish(*c);
}

void CommandRunner::Finish(Running& c) {
  if (!stopping_) {
    bool lost = false;
    if (c.via_agent) {
      std::lock_guard lock(c.mu);
      lost = c.agent_exit.lost;
    }
    if (lost) {
      if (auto why = AgentLostWithSandbox(c)) {
        std::lock_guard lock(c.mu);
        c.lost_why = *why;
      }
    }
    std::optional<std::string> refused;
    if (!c.via_agent) refused = ExecRefusedBySandbox(c);
    const bool exec_refused = refused.has_value();
    if (exec_refused) {
      lost = true;
      std::lock_guard lock(c.mu);
      if (c.lost_why.empty()) c.lost_why = *refused;
    }
    // A lost command is written under mu_, so that SandboxEnded sees it either running here
    // (then ended_ gives its reason now) or recorded in lost_ (then it writes it again).
    std::unique_lock runner_lock(mu_, std::defer_lock);
    if (lost) runner_lock.lock();
    std::unique_lock lock(c.mu);
    store::CommandRecord& r = c.record;
    std::string reason = c.kill_reason.empty() ? "exited" : c.kill_reason;
    int code = -1, sig = 0;
    if (exec_refused) {
      reason = "lost";
    } else if (c.via_agent) {
      if (c.agent_exit.lost) reason = "lost";
      code = c.agent_exit.exit_code;
      sig = c.agent_exit.signal;
    } else {
      const os::ExitStatus& e = c.exit;
      code = e.exit_code;
      // runsc exec reports a process killed by signal N as exit status 128+N.
      sig = e.signaled() ? e.signal : 0;
      if (!sig && !c.kill_reason.empty() && e.exit_code > 128 && e.exit_code < 128 + 65)
        sig = e.exit_code - 128;
    }
    r.status = reason;
    r.termination_reason = reason;
    r.finished_at = NowMillis();
    if (!c.fault.empty()) reason = r.status = r.termination_reason = "lost";
    bool known = reason != "lost";
    r.exit_code = sig || !known ? std::nullopt : std::optional<int>(code);
    r.signal = sig && known ? std::optional<int>(sig) : std::nullopt;
    if (!c.fault.empty()) r.error = c.fault;
    bool sandbox_end_unknown = false;
    if (lost) {
      auto ended = ended_.find(r.sandbox_id);
      sandbox_end_unknown = ended == ended_.end();
      r.error = !sandbox_end_unknown  ? ended->second
                : !c.lost_why.empty() ? c.lost_why
                                      : std::string(kAgentGone);
    }
    ApplyCommandOutput(c.out, c.err, c.truncated, false, c.secrets, r);
    auto record = std::make_shared<const store::CommandRecord>(c.record);
    c.finished = true;
    c.cv.notify_all();
    // The agent keeps the exit (and what is not acknowledged of the output) until it is told
    // they are recorded: one who dies before that finds them again when it attaches.
    agent::Ack end{c.out_total - c.acked_out, c.err_total - c.acked_err, true};
    c.acked_out = c.out_total;
    c.acked_err = c.err_total;
    auto agent = c.via_agent && !lost ? c.agent : nullptr;
    const uint32_t channel = c.channel;
    lock.unlock();
    if (agent) ADAPT_FAULT_POINT("command.agent.before_end_recorded");
    // Kept once durable (and before its end is announced) for the answer that waits on it.
    if (Status st = store_.PutCommand(*record); !st.ok()) {
      spdlog::error("command {}: {}", record->id, st.message());
    } else {
      finished_.Keep(record, std::chrono::steady_clock::now());
      if (agent) IgnoreError(agent->Acknowledge(channel, end), "acknowledging its end");
    }
    if (sandbox_end_unknown) {
      // Losses older than the window are forgotten for every sandbox, so that sandboxes that
      // lost a command and never ended leave nothing behind here.
      auto now = std::chrono::steady_clock::now();
      for (auto it = lost_.begin(); it != lost_.end();) {
        std::erase_if(it->second, [&](const Lost& l) { return now - l.at > kLostWithTheSandbox; });
        it = it->second.empty() ? lost_.erase(it) : std::next(it);
      }
      lost_[record->sandbox_id].push_back({record->org_id, record->id, now});
    }
    if (runner_lock.owns_lock()) runner_lock.unlock();
    if (!c.via_agent) runtime_.ForgetExec(record->sandbox_id, c.process.tree_id);
  }
  Unregister(c.record.id);
}

std::unique_ptr<CommandRunner::Tap> CommandRunner::Follow(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = running_.find(id);
  if (it == running_.end()) return nullptr;
  return std::make_unique<Tap>(it->second);
}

}  // namespace adapt::core
