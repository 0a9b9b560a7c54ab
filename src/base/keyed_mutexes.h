// KeyedMutexes: one mutex per key (a sandbox, a multipart upload), made on first use and
// forgotten once nobody holds it, so that the map does not grow with every key ever seen.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace adapt {

template <typename Mutex>
class KeyedMutexes {
 public:
  // The mutex of `key`; the same one for as long as anyone holds it. Thread-safe.
  std::shared_ptr<Mutex> For(const std::string& key) {
    std::lock_guard lock(mu_);
    auto& weak = mutexes_[key];
    auto strong = weak.lock();
    if (!strong) {
      strong = std::make_shared<Mutex>();
      weak = strong;
    }
    for (auto it = mutexes_.begin(); it != mutexes_.end();)
      it = it->second.expired() ? mutexes_.erase(it) : std::next(it);
    return strong;
  }

  size_t size() {
    std::lock_guard lock(mu_);
    return mutexes_.size();
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<Mutex>> mutexes_;
};

}  // namespace adapt
