// EventBus: wakes the event streams when the store has recorded a status change. The events
// themselves live in the store (so a client can resume after Last-Event-ID); the bus only
// says "look again". Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace adapt::core {

class EventBus {
 public:
  using Listener = std::function<void()>;

  // Returns a token for Unsubscribe. `listener` must not block: it is called from the
  // thread that wrote the change.
  uint64_t Subscribe(Listener listener);
  void Unsubscribe(uint64_t token);
  void Notify();

 private:
  std::mutex mu_;
  uint64_t next_ = 1;
  std::map<uint64_t, Listener> listeners_;
};

}  // namespace adapt::core
