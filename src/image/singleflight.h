// Singleflight: concurrent calls for the same key run the work once and share its result,
// so that two pulls of one image (or two images sharing a layer) download it once.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>

#include "base/status.h"

namespace adapt::image {

class Singleflight {
 public:
  Status Do(const std::string& key, const std::function<Status()>& work) {
    std::promise<Status> promise;
    std::shared_future<Status> future;
    bool leader = false;
    {
      std::lock_guard lock(mu_);
      auto it = inflight_.find(key);
      if (it != inflight_.end()) {
        future = it->second;
      } else {
        future = promise.get_future().share();
        inflight_[key] = future;
        leader = true;
      }
    }
    if (!leader) return future.get();
    Status st = work();
    {
      std::lock_guard lock(mu_);
      inflight_.erase(key);
    }
    promise.set_value(st);
    return st;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_future<Status>> inflight_;
};

}  // namespace adapt::image
