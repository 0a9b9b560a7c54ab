// SandboxMonitor: the daemon's background loop. It notices running sandboxes whose
// workload ended (at once when the runtime says so through Wake, else at its next poll),
// deletes expired sandboxes (the TTL reaper: deadlines live in the store, so expiry
// continues across restarts), retries unfinished deletions, and forgets idempotency keys
// after 24 hours.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "core/sandbox_lifecycle.h"
#include "core/sandbox_service.h"

namespace adapt::core {

class SandboxMonitor {
 public:
  SandboxMonitor(store::Store& store, SandboxLifecycle& lifecycle, SandboxService& service,
                 boost::asio::thread_pool& workers);
  ~SandboxMonitor();

  void Start();
  void Stop();
  // Checks sandbox `id` now rather than at the next poll (the runtime heard its state change).
  void Wake(const std::string& id);

 private:
  void Loop();
  void Tick();
  // Posts `fn` for `id` unless work for it is already queued.
  void Schedule(const std::string& id, std::function<void()> fn);

  store::Store& store_;
  SandboxLifecycle& lifecycle_;
  SandboxService& service_;
  boost::asio::thread_pool& workers_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::set<std::string> in_flight_;
  int64_t last_purge_ = 0;
};

}  // namespace adapt::core
