#include "core/sandbox_automation_runner.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/ignore_error.h"
#include "core/agent_wait.h"
#include "core/reattached_command.h"

namespace adapt::core {

struct SandboxAutomationRunner::Execution {
  Principal who;
  store::AutomationRecord automation;
  store::RunRecord run;
  JobAttempts::Progress progress;
  JobAttempts::Done done;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::mutex mu;
  std::string command_id;  // guarded by mu
  bool cancelled = false;  // guarded by mu
};

SandboxAutomationRunner::SandboxAutomationRunner(SandboxService& sandboxes,
                                                 CommandService& commands,
                                                 runtime::Runtime& runtime,
                                                 store::EventStore& events,
                                                 boost::asio::thread_pool& workers)
    : sandboxes_(sandboxes),
      commands_(commands),
      runtime_(runtime),
      events_(events),
      workers_(workers),
      wakes_(workers, [this](const std::string& org_id, const std::string& sandbox_id) {
        Principal who;
        who.org_id = org_id;
        return sandboxes_.Stop(who, sandbox_id, WhenBusy::kWait).status();
      }) {}

void SandboxAutomationRunner::Shutdown() {
  stopping_ = true;
  wakes_.Shutdown();
}

Status SandboxAutomationRunner::CheckTarget(const std::string& org_id,
                                            const std::string& sandbox_id) {
  Principal who;
  who.org_id = org_id;
  auto sandbox = sandboxes_.Get(who, sandbox_id);
  if (!sandbox.ok()) return sandbox.status();
  if (sandbox->status == "deleting" || sandbox->status == "deleted")
    return NotFound("sandbox '" + sandbox_id + "' not found");
  return Status::Ok();
}

void SandboxAutomationRunner::Start(const store::AutomationRecord& automation,
                                    const store::RunRecord& run, JobAttempts::Progress progress,
                                    JobAttempts::Done done) {
  auto e = std::make_shared<Execution>();
  e->who.org_id = automation.org_id;
  e->automation = automation;
  e->run = run;
  e->progress = std::move(progress);
  e->done = std::move(done);
  {
    std::lock_guard lock(mu_);
    runs_[run.id] = e;
  }
  wakes_.Enter(e->automation.sandbox_id);
  boost::asio::post(workers_,
                    Guarded(
                        "automation " + automation.id + ": run " + run.id, [this, e] { Begin(e); },
                        [this, e](const std::string& error) { FailExecution(e, error); }));
}

void SandboxAutomationRunner::Reattach(const store::AutomationRecord& automation,
                                       const store::RunRecord& run, JobAttempts::Done done) {
  auto e = std::make_shared<Execution>();
  e->who.org_id = run.org_id;
  e->automation = automation;
  // The sandbox the run used: the automation may follow another one since.
  e->automation.sandbox_id = run.sandbox_id;
  e->run = run;
  e->done = std::move(done);
  e->command_id = run.command_id;
  {
    std::lock_guard lock(mu_);
    runs_[run.id] = e;
  }
  wakes_.Enter(e->automation.sandbox_id);
  boost::asio::post(workers_,
                    Guarded(
                        "automation " + automation.id + ": run " + run.id, [this, e] { Resume(e); },
                        [this, e](const std::string& error) { FailExecution(e, error); }));
}

void SandboxAutomationRunner::FailExecution(std::shared_ptr<Execution> e,
                                            const std::string& error) {
  {
    std::lock_guard lock(mu_);
    auto it = runs_.find(e->run.id);
    if (it == runs_.end() || it->second != e) return;  // finished before it threw
  }
  AttemptEnd end;
  end.error = error;
  Finish(e, std::move(end));
}

void SandboxAutomationRunner::Resume(std::shared_ptr<Execution> e) {
  if (stopping_) return;
  if (TargetStartedDuring(e->run)) wakes_.Woke(e->automation.sandbox_id);
  // CommandService::Reconcile attached the command again if the agent still runs it, or
  // recorded it lost; either way its record says how long it may still run.
  auto outcome = commands_.Outcome(e->who, e->automation.sandbox_id, e->run.command_id);
  if (!outcome.ok()) {
    AttemptEnd end;
    end.command_id = e->run.command_id;
    end.error = "reading the command after adaptd restarted: " + RecordMessage(outcome.status());
    Finish(e, std::move(end));
    return;
  }
  commands_.AwaitEnd(e->run.command_id, ReattachedCommandDeadline(outcome->command),
                     [this, e](Waiter::End) { CommandEnded(e); });
}

bool SandboxAutomationRunner::TargetStartedDuring(const store::RunRecord& run) {
  constexpr int kPage = 500;
  int64_t after = 0;
  std::string previous;
  bool started = false;
  for (;;) {
    auto events = events_.ListEvents(run.org_id, run.sandbox_id, after, kPage);
    if (!events.ok()) {
      spdlog::warn("automation run {}: reading sandbox {}'s events: {}", run.id, run.sandbox_id,
                   events.status().message());
      return started;
    }
    for (const auto& ev : *events) {
      // A start from hibernated (a create also begins provisioning, but not after hibernated).
      if (previous == "hibernated" && ev.status == "provisioning" && ev.at >= run.started_at)
        started = true;
      previous = ev.status;
      after = ev.seq;
    }
    if (events->size() < static_cast<size_t>(kPage)) return started;
  }
}

void SandboxAutomationRunner::Begin(std::shared_ptr<Execution> e) {
  if (stopping_) return;
  const std::string& id = e->automation.sandbox_id;
  auto sandbox = sandboxes_.Get(e->who, id);
  if (!sandbox.ok() || sandbox->status == "deleting" || sandbox->status == "deleted") {
    AttemptEnd end;
    end.kind = sandbox.ok() || sandbox.status().code() == Code::kNotFound
                   ? AttemptEnd::Kind::kRefused
                   : AttemptEnd::Kind::kInfrastructure;
    end.error = end.kind == AttemptEnd::Kind::kRefused
                    ? std::string(kTargetNotFound)
                    : "reading the target sandbox: " + sandbox.status().message();
    Finish(e, std::move(end));
    return;
  }
  if (sandbox->status == "running") {
    RunCommand(e);
    return;
  }
  if (sandbox->status == "hibernated") {
    auto started = sandboxes_.Start(e->who, id);
    if (!started.ok()) {
      AttemptEnd end;
      Code code = started.status().code();
      end.kind = code == Code::kResourceExhausted || code == Code::kPaymentRequired
                     ? AttemptEnd::Kind::kQuota
                     : AttemptEnd::Kind::kInfrastructure;
      end.error = "starting the hibernated target: " + RecordMessage(started.status());
      Finish(e, std::move(end));
      return;
    }
    wakes_.Woke(id);
  }
  sandboxes_.AwaitSettled(e->who, id, Waiter::Clock::now() + kStartWait,
                          [this, e](Waiter::End) { TargetSettled(e); });
}

void SandboxAutomationRunner::TargetSettled(std::shared_ptr<Execution> e) {
  if (stopping_) return;
  auto sandbox = sandboxes_.Get(e->who, e->automation.sandbox_id);
  if (!sandbox.ok() || sandbox->status != "running") {
    AttemptEnd end;
    end.error = "the target sandbox did not become ready" +
                (sandbox.ok() ? " (" + sandbox->status + ")" : ": " + sandbox.status().message());
    Finish(e, std::move(end));
    return;
  }
  RunCommand(e);
}

void SandboxAutomationRunner::RunCommand(std::shared_ptr<Execution> e) {
  AwaitAgent(runtime_, workers_, stopping_, e->automation.sandbox_id, kRunAgentWait,
             [this, e](bool) { StartCommand(e); });
}

void SandboxAutomationRunner::StartCommand(std::shared_ptr<Execution> e) {
  if (stopping_) return;
  {
    std::lock_guard lock(e->mu);
    if (e->cancelled) {
      AttemptEnd end;
      end.kind = AttemptEnd::Kind::kCancelled;
      end.error = "cancelled before its command started";
      Finish(e, std::move(end));
      return;
    }
  }
  RunCommandRequest command;
  command.argv = e->automation.argv;
  command.cwd = e->automation.cwd;
  command.env = e->automation.env;
  command.timeout_seconds = e->automation.timeout_seconds;
  command.wait_seconds = 0;
  auto started = commands_.Start(e->who, e->automation.sandbox_id, std::move(command));
  if (!started.ok()) {
    AttemptEnd end;
    end.kind = started.status().code() == Code::kInvalidArgument
                   ? AttemptEnd::Kind::kRefused
                   : AttemptEnd::Kind::kInfrastructure;
    end.error = "starting the command: " + RecordMessage(started.status());
    Finish(e, std::move(end));
    return;
  }
  bool cancelled = false;
  {
    std::lock_guard lock(e->mu);
    e->command_id = started->id;
    cancelled = e->cancelled;
  }
  if (e->progress.command) e->progress.command(started->id);
  if (cancelled)
    IgnoreError(commands_.Kill(e->who, e->automation.sandbox_id, started->id, cancel_grace_),
                "cancel");
  auto deadline = Waiter::Clock::now() + std::chrono::seconds(e->automation.timeout_seconds + 60);
  commands_.AwaitEnd(started->id, deadline, [this, e](Waiter::End) { CommandEnded(e); });
}

void SandboxAutomationRunner::CommandEnded(std::shared_ptr<Execution> e) {
  if (stopping_) return;
  std::string command_id;
  bool cancelled = false;
  {
    std::lock_guard lock(e->mu);
    command_id = e->command_id;
    cancelled = e->cancelled;
  }
  AttemptEnd end;
  end.command_id = command_id;
  auto outcome = commands_.Outcome(e->who, e->automation.sandbox_id, command_id);
  if (!outcome.ok()) {
    end.error = "reading the command: " + RecordMessage(outcome.status());
    Finish(e, std::move(end));
    return;
  }
  const Command& c = outcome->command;
  end.stdout_text = c.stdout_text;
  end.stderr_text = c.stderr_text;
  end.stdout_truncated = end.stderr_truncated = c.truncated;
  end.exit_code = c.exit_code;
  if (cancelled) {
    end.kind = AttemptEnd::Kind::kCancelled;
    end.exit_code.reset();
    end.error = "cancelled";
  } else if (c.status == "exited") {
    end.kind = AttemptEnd::Kind::kExited;
    if (c.signal) end.error = "the command was killed by signal " + std::to_string(*c.signal);
  } else if (c.status == "timeout") {
    end.kind = AttemptEnd::Kind::kTimedOut;
    end.exit_code.reset();
    end.error = "the command ran past its timeout of " +
                std::to_string(e->automation.timeout_seconds) + " seconds";
  } else if (c.status == "failed") {
    end.kind = AttemptEnd::Kind::kRefused;
    end.error = "the command did not start: " + c.error;
  } else {
    end.kind = AttemptEnd::Kind::kInfrastructure;
    end.exit_code.reset();
    end.error = !c.error.empty() ? c.error : "the command ended " + c.status;
  }
  Finish(e, std::move(end));
}

void SandboxAutomationRunner::Finish(std::shared_ptr<Execution> e, AttemptEnd end) {
  {
    std::lock_guard lock(mu_);
    runs_.erase(e->run.id);
  }
  std::string name = "automation " + e->automation.id + ": ending run " + e->run.id;
  boost::asio::post(workers_, Guarded(name, [this, e, name, end = std::move(end)]() mutable {
                      if (stopping_) return;
                      // The run is reported also when stopping its target threw. Stopped again when
                      // a run woke it and this one is the last still in it: the schedule puts it
                      // back to sleep.
                      RunGuarded(name,
                                 [&] { wakes_.Leave(e->who.org_id, e->automation.sandbox_id); });
                      e->done(std::move(end));
                    }));
}

Result<std::string> SandboxAutomationRunner::Replace(const std::string& org_id,
                                                     const std::string& sandbox_id,
                                                     const std::string& automation_id) {
  ASSIGN_OR_RETURN(Sandbox fresh, sandboxes_.Replace(org_id, sandbox_id,
                                                     {{kReplacementLabel, automation_id},
                                                      {kReplacedLabel, sandbox_id}}));
  return fresh.id;
}

Result<std::vector<AutomationRunner::Replacement>> SandboxAutomationRunner::Replacements() {
  ASSIGN_OR_RETURN(auto labelled, sandboxes_.ListLabelled(kReplacementLabel));
  std::vector<Replacement> out;
  for (const auto& s : labelled) {
    Replacement r{s.org_id, s.id, s.config.labels.at(kReplacementLabel), ""};
    if (auto replaced = s.config.labels.find(kReplacedLabel); replaced != s.config.labels.end()) {
      Principal who;
      who.org_id = s.org_id;
      auto old = sandboxes_.Get(who, replaced->second);
      if (old.ok() && old->status != "deleting" && old->status != "deleted")
        r.replaced_id = replaced->second;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void SandboxAutomationRunner::Discard(const std::string& org_id, const std::string& sandbox_id) {
  Principal who;
  who.org_id = org_id;
  auto deleted = sandboxes_.Delete(who, sandbox_id);
  if (!deleted.ok() && deleted.status().code() != Code::kNotFound)
    spdlog::warn("automations: deleting replaced sandbox {}: {}", sandbox_id,
                 deleted.status().message());
}

bool SandboxAutomationRunner::Cancel(const std::string& run_id) {
  std::shared_ptr<Execution> e;
  {
    std::lock_guard lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return false;
    e = it->second;
  }
  std::string command_id;
  {
    std::lock_guard lock(e->mu);
    e->cancelled = true;
    command_id = e->command_id;
  }
  if (!command_id.empty())
    IgnoreError(commands_.Kill(e->who, e->automation.sandbox_id, command_id, cancel_grace_),
                "the command may have ended");
  return true;
}

}  // namespace adapt::core
