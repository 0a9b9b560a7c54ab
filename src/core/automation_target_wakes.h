// AutomationTargetWakes: which automation runs execute in each sandbox, and whether one of them
// woke it from hibernated. A woken sandbox is stopped again when the last run executing in it
// ends, not when the run that woke it does: another run may still be in it (stopping an instant
// sandbox would kill that run's command). A stop refused because the organization holds all
// its places of checkpoint work (ResourceExhausted, core/checkpoint_work.h) holds no thread
// while it waits: it is tried again after a delay, on the pool, unless a run entered the
// sandbox meanwhile (the last of those stops it). Thread-safe.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"

namespace adapt::core {

class AutomationTargetWakes {
 public:
  static constexpr std::chrono::seconds kStopRetry{30};
  // Stops `sandbox_id` of `org_id` (blocking); NotFound counts as stopped.
  using StopTarget =
      std::function<Status(const std::string& org_id, const std::string& sandbox_id)>;

  // `pool` runs the retried stops; call Shutdown before joining it.
  AutomationTargetWakes(boost::asio::thread_pool& pool, StopTarget stop,
                        std::chrono::milliseconds retry_after = kStopRetry);
  ~AutomationTargetWakes();

  // A run begins executing in `sandbox_id`; every Enter is followed by one Leave.
  void Enter(const std::string& sandbox_id);
  // The run that entered `sandbox_id` started it from hibernated.
  void Woke(const std::string& sandbox_id);
  // A run leaves `sandbox_id`. When it was the last and a run woke the sandbox, stops it on
  // this thread (or schedules the retry described above).
  void Leave(const std::string& org_id, const std::string& sandbox_id);
  // Runs executing in `sandbox_id`.
  int Executing(const std::string& sandbox_id) const;
  // adaptd stops: pending retries are dropped (the sandbox stays as it is).
  void Shutdown();

 private:
  struct Target;
  // Stops the sandbox if it is still woken and empty; schedules a retry when refused.
  void StopIfIdle(const std::string& org_id, const std::string& sandbox_id);
  // Forgets `sandbox_id` once nothing is left to remember of it. REQUIRES: mu_ held.
  void ForgetIfIdle(const std::string& sandbox_id);

  boost::asio::thread_pool& pool_;
  StopTarget stop_;
  const std::chrono::milliseconds retry_after_;
  mutable std::mutex mu_;
  bool stopping_ = false;                                   // guarded by mu_
  std::map<std::string, std::shared_ptr<Target>> targets_;  // guarded by mu_; by sandbox id
};

}  // namespace adapt::core
