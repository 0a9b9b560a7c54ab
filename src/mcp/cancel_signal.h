// CancelSignal: set once when the client cancels a call (notifications/cancelled, or its
// session ends). A tool that works on a thread reads it; a tool that waits without one asks to
// be called when it is set. Thread-safe.
#pragma once

#include <functional>
#include <mutex>
#include <utility>
#include <vector>

namespace adapt::mcp {

class CancelSignal {
 public:
  bool IsSet() const {
    std::lock_guard lock(mu_);
    return set_;
  }
  // Sets it and runs what OnSet registered, once.
  void Set() {
    std::vector<std::function<void()>> fns;
    {
      std::lock_guard lock(mu_);
      if (set_) return;
      set_ = true;
      fns.swap(on_set_);
    }
    for (auto& fn : fns) fn();
  }
  // Runs `fn` when the signal is set: at once, on this thread, when it already is; else on the
  // thread that sets it. `fn` must not block.
  void OnSet(std::function<void()> fn) {
    {
      std::lock_guard lock(mu_);
      if (!set_) {
        on_set_.push_back(std::move(fn));
        return;
      }
    }
    fn();
  }

 private:
  mutable std::mutex mu_;
  bool set_ = false;
  std::vector<std::function<void()>> on_set_;
};

}  // namespace adapt::mcp
