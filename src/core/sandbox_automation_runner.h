// SandboxAutomationRunner: the daemon's AutomationRunner. A run reads its target sandbox; a
// hibernated target is started (SandboxService::Start), awaited, and stopped again after the
// command (durable keeps its storage, instant discards its runtime, as stop does); the command
// runs through CommandService, whose output retention and secret redaction the run reuses.
// Every wait parks on the Waiter: no thread is held while a sandbox boots or a command runs.
// Thread-safe.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/automation_runner.h"
#include "core/command_service.h"
#include "core/sandbox_service.h"

namespace adapt::core {

class SandboxAutomationRunner : public AutomationRunner {
 public:
  static constexpr std::chrono::minutes kStartWait{5};

  SandboxAutomationRunner(SandboxService& sandboxes, CommandService& commands,
                          boost::asio::thread_pool& workers);

  Status CheckTarget(const std::string& org_id, const std::string& sandbox_id) override;
  void Start(const store::AutomationRecord& automation, const store::RunRecord& run,
             JobAttempts::Progress progress, JobAttempts::Done done) override;
  bool Cancel(const std::string& run_id) override;
  Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id) override;
  void Discard(const std::string& org_id, const std::string& sandbox_id) override;
  // adaptd stops: runs in flight report nothing more.
  void Shutdown() { stopping_ = true; }

 private:
  struct Execution;
  void Begin(std::shared_ptr<Execution> e);
  void TargetSettled(std::shared_ptr<Execution> e);
  void RunCommand(std::shared_ptr<Execution> e);
  void CommandEnded(std::shared_ptr<Execution> e);
  // Stops the target if this run started it, forgets the run, then reports `end`.
  void Finish(std::shared_ptr<Execution> e, AttemptEnd end);

  SandboxService& sandboxes_;
  CommandService& commands_;
  boost::asio::thread_pool& workers_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Execution>> runs_;  // guarded by mu_; by run id
};

}  // namespace adapt::core
