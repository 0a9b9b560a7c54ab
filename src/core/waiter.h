// Waiter: the one way adaptd waits for something to happen (a sandbox to leave provisioning, a
// command to end) without holding a thread. A wait names the change it waits on; every signal
// of that change on the EventBus runs the wait's check on the pool, and an Asio timer on the
// same pool ends it at its deadline. REST's waitSeconds, MCP's wait_for_sandbox and
// run_command's wait all park here, so any number of waits cost memory, not threads.
// Thread-safe.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/event_bus.h"

namespace adapt::core {

// Progress reports while a wait lasts: `fn` runs on the pool `first` after the start, then
// every `every`. Must not block.
struct WaitTicks {
  std::chrono::milliseconds first{0}, every{0};
  std::function<void()> fn;
};

class Waiter {
 public:
  using Clock = std::chrono::steady_clock;
  enum class End { kReady, kDeadline, kCancelled };
  // True when the wait is over. Runs on the pool, never two at once for one wait; may block
  // briefly (a store read).
  using Check = std::function<bool()>;
  // Called exactly once per wait, on the pool, however it ended; may block briefly.
  using Done = std::function<void(End)>;
  using Ticks = WaitTicks;

  class Wait;
  // What a caller keeps to end its wait early. Dropping it does not end the wait.
  class Handle {
   public:
    Handle() = default;
    explicit Handle(std::shared_ptr<Wait> wait) : wait_(std::move(wait)) {}
    // Ends the wait with kCancelled, unless it already ended.
    void Cancel() const;

   private:
    std::shared_ptr<Wait> wait_;
  };

  static constexpr size_t kMaxWaits = 10000;

  // `pool` runs the checks, the timers and Done; it must outlive the Waiter's waits (call
  // Shutdown before joining it). Past `max_waits` waits at once, a new wait ends after its
  // first check (kDeadline when that is false): its caller answers with the state now, as a
  // wait of zero seconds would, rather than the server growing without bound.
  Waiter(EventBus& bus, boost::asio::thread_pool& pool, size_t max_waits = kMaxWaits);
  ~Waiter();
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // Waits for `check` to hold, checking it once at once (a change before the wait began
  // counts) and again at every signal of `on` (kind and id), until `deadline`.
  Handle Start(Change on, Clock::time_point deadline, Check check, Done done, Ticks ticks = {});
  // Ends every wait with kCancelled and refuses new ones (they end at once the same way), so
  // the pool runs out of work and can be joined.
  void Shutdown();
  // Waits in progress.
  size_t size() const;

  struct Registry;

 private:
  EventBus& bus_;
  boost::asio::thread_pool& pool_;
  std::shared_ptr<Registry> registry_;
  uint64_t subscription_ = 0;
};

}  // namespace adapt::core
