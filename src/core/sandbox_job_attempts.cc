#include "core/sandbox_job_attempts.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/agent_wait.h"
#include "core/reattached_command.h"

namespace adapt::core {
namespace {

// A create or start the request itself made impossible (a bad image, an unknown secret) is
// final; one a limit refused is a quota skip; anything else is the infrastructure's.
AttemptEnd::Kind KindOfRefusal(const Status& st) {
  switch (st.code()) {
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kUnsupported:
    case Code::kPermissionDenied:
    case Code::kPayloadTooLarge:
      return AttemptEnd::Kind::kRefused;
    case Code::kResourceExhausted:
    case Code::kPaymentRequired:
      return AttemptEnd::Kind::kQuota;
    default:
      return AttemptEnd::Kind::kInfrastructure;
  }
}

}  // namespace

struct SandboxJobAttempts::Attempt {
  Principal who;
  store::JobRecord job;
  store::RunRecord run;
  Progress progress;
  Done done;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::mutex mu;
  std::string sandbox_id;  // guarded by mu
  std::string command_id;  // guarded by mu
  bool cancelled = false;  // guarded by mu
};

SandboxJobAttempts::SandboxJobAttempts(SandboxService& sandboxes, CommandService& commands,
                                       runtime::Runtime& runtime, boost::asio::thread_pool& workers)
    : sandboxes_(sandboxes), commands_(commands), runtime_(runtime), workers_(workers) {}

void SandboxJobAttempts::Start(const store::JobRecord& job, const store::RunRecord& run,
                               Progress progress, Done done) {
  auto a = std::make_shared<Attempt>();
  a->who.org_id = job.org_id;
  a->job = job;
  a->run = run;
  a->progress = std::move(progress);
  a->done = std::move(done);
  {
    std::lock_guard lock(mu_);
    attempts_[run.id] = a;
  }
  boost::asio::post(workers_,
                    Guarded(
                        "job " + job.id + ": run " + run.id, [this, a] { CreateSandbox(a); },
                        [this, a](const std::string& error) { FailAttempt(a, error); }));
}

void SandboxJobAttempts::Reattach(const store::JobRecord& job, const store::RunRecord& run,
                                  Done done) {
  auto a = std::make_shared<Attempt>();
  a->who.org_id = job.org_id;
  a->job = job;
  a->run = run;
  a->done = std::move(done);
  a->sandbox_id = run.sandbox_id;
  a->command_id = run.command_id;
  // The job's timeout counts from the attempt's start, before the restart.
  a->started -= std::chrono::milliseconds(std::max<int64_t>(0, NowMillis() - run.started_at));
  {
    std::lock_guard lock(mu_);
    attempts_[run.id] = a;
  }
  boost::asio::post(workers_, Guarded(
                                  "job " + job.id + ": run " + run.id, [this, a] { Resume(a); },
                                  [this, a](const std::string& error) { FailAttempt(a, error); }));
}

void SandboxJobAttempts::FailAttempt(std::shared_ptr<Attempt> a, const std::string& error) {
  {
    std::lock_guard lock(mu_);
    auto it = attempts_.find(a->run.id);
    if (it == attempts_.end() || it->second != a) return;  // finished before it threw
  }
  AttemptEnd end;
  end.error = error;
  Finish(a, std::move(end));
}

void SandboxJobAttempts::Resume(std::shared_ptr<Attempt> a) {
  if (stopping_) return;
  // CommandService::Reconcile attached the command again if the agent still runs it, or
  // recorded it lost; either way its record says how long it may still run.
  auto outcome = commands_.Outcome(a->who, a->sandbox_id, a->command_id);
  if (!outcome.ok()) {
    AttemptEnd end;
    end.error =
        "reading the job's command after adaptd restarted: " + RecordMessage(outcome.status());
    Finish(a, std::move(end));
    return;
  }
  commands_.AwaitEnd(a->command_id, ReattachedCommandDeadline(outcome->command),
                     [this, a](Waiter::End) { CommandEnded(a); });
}

void SandboxJobAttempts::CreateSandbox(std::shared_ptr<Attempt> a) {
  if (stopping_) return;
  const store::JobTemplate& spec = a->job.spec;
  core::CreateSandbox req;
  req.image = spec.image;
  req.cpu = spec.cpu;
  req.memory_mib = spec.memory_mib;
  req.disk_mib = spec.disk_mib;
  req.ttl_seconds = spec.timeout_seconds;
  req.env = spec.env;
  req.secrets = spec.secrets;
  req.startup_class = "instant";
  NetworkRequest network;
  network.egress = spec.egress;
  req.network = network;
  auto created = sandboxes_.Create(a->who, req, std::nullopt);
  if (!created.ok()) {
    AttemptEnd end;
    end.kind = KindOfRefusal(created.status());
    end.error = "creating the job's sandbox: " + RecordMessage(created.status());
    Finish(a, std::move(end));
    return;
  }
  {
    std::lock_guard lock(a->mu);
    a->sandbox_id = created->id;
  }
  if (a->progress.sandbox) a->progress.sandbox(created->id);
  sandboxes_.AwaitSettled(a->who, created->id, Waiter::Clock::now() + kStartWait,
                          [this, a](Waiter::End) { SandboxSettled(a); });
}

bool SandboxJobAttempts::EndedByCancel(const std::shared_ptr<Attempt>& a, std::string& sandbox_id) {
  bool cancelled = false;
  {
    std::lock_guard lock(a->mu);
    sandbox_id = a->sandbox_id;
    cancelled = a->cancelled;
  }
  if (!cancelled) return false;
  AttemptEnd end;
  end.kind = AttemptEnd::Kind::kCancelled;
  end.error = "cancelled before its command started";
  Finish(a, std::move(end));
  return true;
}

void SandboxJobAttempts::SandboxSettled(std::shared_ptr<Attempt> a) {
  if (stopping_) return;
  std::string sandbox_id;
  if (EndedByCancel(a, sandbox_id)) return;
  auto sandbox = sandboxes_.Get(a->who, sandbox_id);
  if (!sandbox.ok() || sandbox->status != "running") {
    AttemptEnd end;
    end.error =
        "the job's sandbox " + sandbox_id + " did not start" +
        (sandbox.ok() ? (sandbox->error ? ": " + *sandbox->error : " (" + sandbox->status + ")")
                      : ": " + sandbox.status().message());
    Finish(a, std::move(end));
    return;
  }
  AwaitAgent(runtime_, workers_, stopping_, sandbox_id, kRunAgentWait,
             [this, a](bool) { StartCommand(a); });
}

void SandboxJobAttempts::StartCommand(std::shared_ptr<Attempt> a) {
  if (stopping_) return;
  std::string sandbox_id;
  if (EndedByCancel(a, sandbox_id)) return;
  RunCommandRequest command;
  command.argv = a->job.spec.argv;
  command.cwd = a->job.spec.cwd;
  command.env["ADAPT_JOB_ATTEMPT"] = std::to_string(a->run.attempt);
  command.timeout_seconds = a->job.spec.timeout_seconds;
  command.wait_seconds = 0;
  auto started = commands_.Start(a->who, sandbox_id, std::move(command));
  if (!started.ok()) {
    AttemptEnd end;
    end.kind = started.status().code() == Code::kInvalidArgument
                   ? AttemptEnd::Kind::kRefused
                   : AttemptEnd::Kind::kInfrastructure;
    end.error = "starting the job's command: " + RecordMessage(started.status());
    Finish(a, std::move(end));
    return;
  }
  bool cancelled = false;  // while the command started
  {
    std::lock_guard lock(a->mu);
    a->command_id = started->id;
    cancelled = a->cancelled;
  }
  if (a->progress.command) a->progress.command(started->id);
  if (cancelled)
    IgnoreError(commands_.Kill(a->who, sandbox_id, started->id, cancel_grace_), "cancel");
  // The command's own timeout ends it; the margin covers recording its end.
  auto deadline = Waiter::Clock::now() + std::chrono::seconds(a->job.spec.timeout_seconds + 60);
  commands_.AwaitEnd(started->id, deadline, [this, a](Waiter::End) { CommandEnded(a); });
}

void SandboxJobAttempts::CommandEnded(std::shared_ptr<Attempt> a) {
  if (stopping_) return;
  std::string sandbox_id, command_id;
  bool cancelled = false;
  {
    std::lock_guard lock(a->mu);
    sandbox_id = a->sandbox_id;
    command_id = a->command_id;
    cancelled = a->cancelled;
  }
  AttemptEnd end;
  auto outcome = commands_.Outcome(a->who, sandbox_id, command_id);
  if (!outcome.ok()) {
    end.error = "reading the job's command: " + RecordMessage(outcome.status());
    Finish(a, std::move(end));
    return;
  }
  const Command& c = outcome->command;
  end.stdout_text = c.stdout_text;
  end.stderr_text = c.stderr_text;
  end.stdout_truncated = end.stderr_truncated = c.truncated;
  end.exit_code = c.exit_code;
  // A command that went with its sandbox (deleted, died) while the attempt did not end it:
  // the agent's loss, or a kill signal from the sandbox's teardown.
  auto sandbox = sandboxes_.Get(a->who, sandbox_id);
  bool sandbox_gone = !sandbox.ok() || sandbox->status != "running";
  auto elapsed = std::chrono::steady_clock::now() - a->started;
  bool past_timeout = elapsed >= std::chrono::seconds(a->job.spec.timeout_seconds);
  // A failing end while the sandbox went away (runsc exec answers 128 when its sandbox is torn
  // down, the agent's commands die by signal) is the sandbox's failure; a clean exit stands.
  bool went_with_sandbox = sandbox_gone && !cancelled && c.exit_code != 0;
  if (c.status == "exited" && !went_with_sandbox) {
    end.kind = AttemptEnd::Kind::kExited;
    if (c.signal) end.error = "the command was killed by signal " + std::to_string(*c.signal);
  } else if (c.status == "timeout" || ((c.status == "lost" || went_with_sandbox) && past_timeout)) {
    // The sandbox's TTL is the job's timeout: a sandbox that expired under its command ran out
    // of the job's time, not of the infrastructure's.
    end.kind = AttemptEnd::Kind::kTimedOut;
    end.exit_code.reset();
    end.error = "the command ran past the job's timeout of " +
                std::to_string(a->job.spec.timeout_seconds) + " seconds";
  } else if (cancelled) {
    end.kind = AttemptEnd::Kind::kCancelled;
    end.exit_code.reset();
    end.error = "cancelled";
  } else if (c.status == "failed") {
    end.kind = AttemptEnd::Kind::kRefused;
    end.error = "the command did not start: " + c.error;
  } else if (c.status == "running") {
    end.kind = AttemptEnd::Kind::kInfrastructure;
    end.error = "the command did not end in time";
  } else {
    end.kind = AttemptEnd::Kind::kInfrastructure;
    end.exit_code.reset();
    end.error = !c.error.empty() ? c.error
                : went_with_sandbox
                    ? "the job's sandbox ended under its command (" +
                          (sandbox.ok() ? sandbox->status : sandbox.status().message()) + ")"
                    : "the command ended " + c.status;
  }
  Finish(a, std::move(end));
}

void SandboxJobAttempts::Finish(std::shared_ptr<Attempt> a, AttemptEnd end) {
  std::string sandbox_id, command_id;
  {
    std::lock_guard lock(a->mu);
    sandbox_id = a->sandbox_id;
    command_id = a->command_id;
  }
  end.sandbox_id = sandbox_id;
  end.command_id = command_id;
  {
    std::lock_guard lock(mu_);
    attempts_.erase(a->run.id);
  }
  std::string name = "job " + a->job.id + ": ending run " + a->run.id;
  boost::asio::post(workers_,
                    Guarded(name, [this, a, name, sandbox_id, end = std::move(end)]() mutable {
                      if (stopping_) return;
                      // The run is reported also when deleting its sandbox threw.
                      RunGuarded(name, [&] {
                        if (sandbox_id.empty()) return;
                        auto deleted = sandboxes_.Delete(a->who, sandbox_id);
                        if (!deleted.ok() && deleted.status().code() != Code::kNotFound)
                          spdlog::warn("job {}: deleting sandbox {}: {}", a->job.id, sandbox_id,
                                       deleted.status().message());
                      });
                      a->done(std::move(end));
                    }));
}

bool SandboxJobAttempts::Cancel(const std::string& run_id) {
  std::shared_ptr<Attempt> a;
  {
    std::lock_guard lock(mu_);
    auto it = attempts_.find(run_id);
    if (it == attempts_.end()) return false;
    a = it->second;
  }
  std::string sandbox_id, command_id;
  {
    std::lock_guard lock(a->mu);
    a->cancelled = true;
    sandbox_id = a->sandbox_id;
    command_id = a->command_id;
  }
  if (!command_id.empty())
    IgnoreError(commands_.Kill(a->who, sandbox_id, command_id, cancel_grace_),
                "the command may have ended");
  return true;
}

void SandboxJobAttempts::Abandon(const std::string& org_id, const std::string& sandbox_id) {
  Principal who;
  who.org_id = org_id;
  boost::asio::post(
      workers_, Guarded("jobs: deleting abandoned sandbox " + sandbox_id, [this, who, sandbox_id] {
        auto deleted = sandboxes_.Delete(who, sandbox_id);
        if (!deleted.ok() && deleted.status().code() != Code::kNotFound)
          spdlog::warn("jobs: deleting abandoned sandbox {}: {}", sandbox_id,
                       deleted.status().message());
      }));
}

}  // namespace adapt::core
