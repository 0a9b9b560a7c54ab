#include "core/event_retention.h"

#include <algorithm>

#include "base/background_work.h"
#include "base/log.h"
#include "base/time.h"

namespace adapt::core {

EventRetention::EventRetention(store::EventStore& events, int64_t retention_seconds)
    : events_(events), retention_millis_(retention_seconds * 1000) {}

EventRetention::~EventRetention() { Stop(); }

void EventRetention::Start() {
  thread_ = std::thread(Guarded("event retention", [this] { Loop(); }));
}

void EventRetention::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<int64_t> EventRetention::PruneOnce(int64_t now) {
  int64_t total = 0;
  for (int batch = 0; batch < kBatchesPerPass; ++batch) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
    }
    ASSIGN_OR_RETURN(int64_t n, events_.PruneEvents(now - retention_millis_, kBatchRows));
    total += n;
    if (n < kBatchRows) break;  // nothing older is left
  }
  return total;
}

void EventRetention::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    RunGuarded("event retention pass", [this] {
      auto pruned = PruneOnce(NowMillis());
      if (!pruned.ok())
        spdlog::warn("events: pruning those past their retention: {}", pruned.status().message());
      else if (*pruned > 0)
        spdlog::info("events: {} past their retention deleted", *pruned);
    });
    lock.lock();
    // A short retention (tests) is looked at four times in its length: an event lives at
    // most a quarter longer than it.
    auto wait = std::clamp<std::chrono::milliseconds>(
        std::chrono::milliseconds(retention_millis_ / 4), std::chrono::seconds(1), kPassInterval);
    cv_.wait_for(lock, wait, [this] { return stopping_; });
  }
}

}  // namespace adapt::core
