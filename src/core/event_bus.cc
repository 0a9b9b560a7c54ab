#include "core/event_bus.h"

#include <vector>

namespace adapt::core {

uint64_t EventBus::Subscribe(Listener listener) {
  std::lock_guard lock(mu_);
  uint64_t token = next_++;
  listeners_[token] = std::move(listener);
  return token;
}

void EventBus::Unsubscribe(uint64_t token) {
  std::lock_guard lock(mu_);
  listeners_.erase(token);
}

void EventBus::Notify(const Change& change) {
  std::vector<Listener> copy;
  {
    std::lock_guard lock(mu_);
    for (const auto& [_, l] : listeners_) copy.push_back(l);
  }
  for (const auto& l : copy) l(change);
}

}  // namespace adapt::core
