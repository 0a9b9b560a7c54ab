// SandboxAutomationRunner: the daemon's AutomationRunner. A run reads its target sandbox; a
// hibernated target is started (SandboxService::Start), awaited, and stopped again once the
// last run executing in it ends (core/automation_target_wakes.h; durable keeps its storage,
// instant discards its runtime, as stop does); the command
// runs through CommandService, whose output retention and secret redaction the run reuses, once
// the target's agent is connected (core/agent_wait.h: a command the agent serves outlives an
// adaptd restart). Every wait parks on the Waiter: no thread is held while a sandbox boots or a
// command runs. A run re-attached after an adaptd restart learns whether it had started its
// target from the target's status events (a start from hibernated after the run began), as the
// previous adaptd did not record it. Thread-safe.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/automation_runner.h"
#include "core/automation_target_wakes.h"
#include "core/command_service.h"
#include "core/sandbox_service.h"
#include "runtime/runtime.h"
#include "store/event_store.h"

namespace adapt::core {

class SandboxAutomationRunner : public AutomationRunner {
 public:
  static constexpr std::chrono::minutes kStartWait{5};

  SandboxAutomationRunner(SandboxService& sandboxes, CommandService& commands,
                          runtime::Runtime& runtime, store::EventStore& events,
                          boost::asio::thread_pool& workers);

  Status CheckTarget(const std::string& org_id, const std::string& sandbox_id) override;
  void Start(const store::AutomationRecord& automation, const store::RunRecord& run,
             JobAttempts::Progress progress, JobAttempts::Done done) override;
  void Reattach(const store::AutomationRecord& automation, const store::RunRecord& run,
                JobAttempts::Done done) override;
  bool Cancel(const std::string& run_id) override;
  Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id,
                              const std::string& automation_id) override;
  Result<std::vector<Replacement>> Replacements() override;
  void Discard(const std::string& org_id, const std::string& sandbox_id) override;
  // adaptd stops: runs in flight report nothing more.
  void Shutdown();
  // How long a cancelled command has between SIGTERM and SIGKILL. Set before serving.
  void set_cancel_grace(std::chrono::milliseconds grace) { cancel_grace_ = grace; }

 private:
  struct Execution;
  void Begin(std::shared_ptr<Execution> e);
  void TargetSettled(std::shared_ptr<Execution> e);
  // Waits for the target's agent, then StartCommand.
  void RunCommand(std::shared_ptr<Execution> e);
  void StartCommand(std::shared_ptr<Execution> e);
  void CommandEnded(std::shared_ptr<Execution> e);
  // A re-attached run: waits for the end of the command it recorded.
  void Resume(std::shared_ptr<Execution> e);
  // Whether the target had a start from hibernated since run `run` began (its events say).
  bool TargetStartedDuring(const store::RunRecord& run);
  // Forgets the run, leaves its target (stopped when a run woke it and this was the last run
  // in it), then reports `end`.
  void Finish(std::shared_ptr<Execution> e, AttemptEnd end);
  // Where a step that threw lands: Finish with `error`, unless the run was finished already.
  void FailExecution(std::shared_ptr<Execution> e, const std::string& error);

  SandboxService& sandboxes_;
  CommandService& commands_;
  runtime::Runtime& runtime_;
  store::EventStore& events_;
  boost::asio::thread_pool& workers_;
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds cancel_grace_ = kDefaultRunCancelGrace;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Execution>> runs_;  // guarded by mu_; by run id
  AutomationTargetWakes wakes_;
};

}  // namespace adapt::core
