// SandboxJobAttempts: the daemon's JobAttempts. An attempt creates a fresh instant sandbox from
// the job's template (through SandboxService, so images, secrets, limits and the network policy
// are checked as for any create), waits for it to run and for its agent (core/agent_wait.h: a
// command the agent serves outlives an adaptd restart), starts the command through
// CommandService (whose output retention and secret redaction the run's output reuses), waits
// for its end, and deletes the sandbox. Every wait parks on the Waiter: no thread is held while
// a sandbox boots or a command runs. Thread-safe.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/command_service.h"
#include "core/job_attempt.h"
#include "core/sandbox_service.h"
#include "runtime/runtime.h"

namespace adapt::core {

class SandboxJobAttempts : public JobAttempts {
 public:
  // How long a sandbox may take to start before the attempt counts as an infrastructure
  // failure.
  static constexpr std::chrono::minutes kStartWait{5};

  SandboxJobAttempts(SandboxService& sandboxes, CommandService& commands, runtime::Runtime& runtime,
                     boost::asio::thread_pool& workers);

  void Start(const store::JobRecord& job, const store::RunRecord& run, Progress progress,
             Done done) override;
  void Reattach(const store::JobRecord& job, const store::RunRecord& run, Done done) override;
  bool Cancel(const std::string& run_id) override;
  void Abandon(const std::string& org_id, const std::string& sandbox_id) override;
  // adaptd stops: attempts in flight report nothing more (their runs stay recorded as they
  // are, for the next adaptd's JobService::Recover) and none starts.
  void Shutdown() { stopping_ = true; }
  // How long a cancelled command has between SIGTERM and SIGKILL. Set before serving.
  void set_cancel_grace(std::chrono::milliseconds grace) { cancel_grace_ = grace; }

 private:
  struct Attempt;
  void CreateSandbox(std::shared_ptr<Attempt> a);
  void SandboxSettled(std::shared_ptr<Attempt> a);
  // Reads the attempt's sandbox id; a cancelled attempt is finished (cancelled before its
  // command started) and true returned.
  bool EndedByCancel(const std::shared_ptr<Attempt>& a, std::string& sandbox_id);
  void StartCommand(std::shared_ptr<Attempt> a);
  // A re-attached attempt: waits for the end of the command it recorded.
  void Resume(std::shared_ptr<Attempt> a);
  void CommandEnded(std::shared_ptr<Attempt> a);
  // Deletes the attempt's sandbox (if any), forgets the attempt, then reports `end`.
  void Finish(std::shared_ptr<Attempt> a, AttemptEnd end);
  // Where a step that threw lands: Finish with `error` (an infrastructure failure, retried
  // as the job allows), unless the attempt was finished already.
  void FailAttempt(std::shared_ptr<Attempt> a, const std::string& error);

  SandboxService& sandboxes_;
  CommandService& commands_;
  runtime::Runtime& runtime_;
  boost::asio::thread_pool& workers_;
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds cancel_grace_ = kDefaultRunCancelGrace;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Attempt>> attempts_;  // guarded by mu_; by run id
};

}  // namespace adapt::core
