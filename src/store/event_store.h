// EventStore: sandbox status events, written by SandboxStore with each status change, deployed
// apps' events, and runs' status changes, written by JobStore and AutomationStore in the
// transaction that changes the run's status. One domain of
// Store (store/store.h): a service that needs only this domain depends on this interface, and a
// test can give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class EventStore {
 public:
  virtual ~EventStore() = default;

  // Events after `after_seq`, oldest first; `sandbox_id` empty: all of the organization's.
  virtual Result<std::vector<EventRecord>> ListEvents(const std::string& org_id,
                                                      const std::string& sandbox_id,
                                                      int64_t after_seq, int limit) = 0;
  // The newest event's sequence number (0 when none): where a live stream starts.
  virtual Result<int64_t> LatestEventSeq() = 0;
  // Retention (core/event_retention.h): deletes up to `max_rows` of the events older than
  // `before` (milliseconds), oldest first, in one transaction, and returns how many went. A
  // sandbox's newest status event stays, unless it says `deleted`: usage metering and the
  // sandbox's own stream read its state from it.
  virtual Result<int64_t> PruneEvents(int64_t before, int max_rows) = 0;
  // The largest sequence number PruneEvents ever deleted (0: none): a Last-Event-ID below it
  // may have missed events that are gone.
  virtual Result<int64_t> PrunedEventSeq() = 0;
  // Appends a deployed app's event (`e.app_id` set, `e.sandbox_id` empty); seq is assigned.
  virtual Status AppendAppEvent(const EventRecord& e) = 0;
  // Called with a run's id after a transaction that changed its status (and wrote its event)
  // committed, on the writer's thread, holding no lock of the store; it must not block. Set
  // once, before serving (the daemon announces the change on its event bus).
  using RunEventListener = std::function<void(const std::string& run_id)>;
  virtual void SetRunEventListener(RunEventListener listener) = 0;
};

}  // namespace adapt::store
