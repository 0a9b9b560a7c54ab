// EventRetention: forgets the events (GET /v1/events, a sandbox's event stream) older than the
// retention (--event-retention-seconds). A pass every kPassInterval (a quarter of the
// retention when that is shorter, at least 1 s) deletes them oldest first, in batches of
// kBatchRows, each its own short transaction through the store's index on the events' time,
// and at most kBatchesPerPass batches: a backlog (a first start on an old store) is worked off
// over several passes and never holds the store for long. A sandbox's newest status event
// stays (store/event_store.h says why). A client whose Last-Event-ID is older than what was
// pruned gets a `reset` (api/event_resume.h).
// One background thread; Stop (or the destructor) joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "store/event_store.h"

namespace adapt::core {

class EventRetention {
 public:
  static constexpr std::chrono::seconds kPassInterval{60};
  static constexpr int kBatchRows = 500;
  static constexpr int kBatchesPerPass = 20;

  EventRetention(store::EventStore& events, int64_t retention_seconds);
  ~EventRetention();
  EventRetention(const EventRetention&) = delete;
  EventRetention& operator=(const EventRetention&) = delete;

  void Start();
  void Stop();
  // One pass at `now` (milliseconds): returns how many events went.
  Result<int64_t> PruneOnce(int64_t now);

 private:
  void Loop();

  store::EventStore& events_;
  int64_t retention_millis_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace adapt::core
