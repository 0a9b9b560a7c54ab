// WakeSignal: a one-shot flag that one thread waits on, with a deadline, and any thread sets:
// how a caller that waits on a thread of its own (MCP tools) parks on the event that ends its
// wait. Held by shared_ptr, so that a callback that fires late finds it alive. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace adapt::core {

class WakeSignal {
 public:
  void Fire() {
    std::lock_guard lock(mu_);
    fired_ = true;
    cv_.notify_all();
  }
  // True when fired before `until`.
  bool WaitUntil(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, until, [this] { return fired_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool fired_ = false;
};

}  // namespace adapt::core
