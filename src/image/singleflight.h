// Singleflight: concurrent calls for the same key run the work once and share its result,
// so that two pulls of one image (or two images sharing a layer) download it once.
// Thread-safe. The key is removed when the work ends, however it ends (a throw included), so a
// later call runs the work afresh.
#pragma once

#include <exception>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>

#include "base/status.h"

namespace adapt::image {

class Singleflight {
 public:
  // What a caller that waited on another caller's work does when that work failed.
  enum class OnFailure {
    kShare,  // takes the same error (or exception): the work fails the same way for everyone
    kRetry,  // runs the work itself: the failure may have been the other caller's own (its
             // registry, its image's budget), and must not become this caller's
  };

  // Runs `work` unless a call for `key` is in progress, in which case it waits for that one.
  // An exception from `work` reaches this caller and, with kShare, those waiting on it.
  Status Do(const std::string& key, const std::function<Status()>& work,
            OnFailure on_failure = OnFailure::kShare) {
    while (true) {
      std::promise<Status> promise;
      std::shared_future<Status> future;
      bool leader = false;
      {
        std::lock_guard lock(mu_);
        auto it = inflight_.find(key);
        if (it != inflight_.end()) {
          future = it->second.result;
          ++it->second.waiters;
        } else {
          future = promise.get_future().share();
          inflight_[key] = Flight{future, 0};
          leader = true;
        }
      }
      if (leader) return Lead(key, work, promise);
      if (on_failure == OnFailure::kShare) return future.get();
      try {
        Status st = future.get();
        if (st.ok()) return st;
      } catch (...) {  // the other caller's exception is its own; this one tries again
      }
    }
  }

  // How many callers wait on the work in progress for `key` (tests order their threads by it).
  int Waiting(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = inflight_.find(key);
    return it == inflight_.end() ? 0 : it->second.waiters;
  }

 private:
  Status Lead(const std::string& key, const std::function<Status()>& work,
              std::promise<Status>& promise) {
    Status st;
    std::exception_ptr thrown;
    try {
      st = work();
    } catch (...) {
      thrown = std::current_exception();
    }
    // Removed before the waiters wake, so that one retrying starts new work instead of finding
    // this finished call again.
    {
      std::lock_guard lock(mu_);
      inflight_.erase(key);
    }
    if (thrown) {
      promise.set_exception(thrown);
      std::rethrow_exception(thrown);
    }
    promise.set_value(st);
    return st;
  }

  struct Flight {
    std::shared_future<Status> result;
    int waiters = 0;
  };
  std::mutex mu_;
  std::map<std::string, Flight> inflight_;
};

}  // namespace adapt::image
