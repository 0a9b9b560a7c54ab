// MemoryStore: the events' retention, as SqliteStore's (store/sqlite_events.cc).
#include <algorithm>
#include <set>

#include "store/memory_store.h"

namespace adapt::store {

Result<int64_t> MemoryStore::PruneEvents(int64_t before, int max_rows) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  // Each sandbox's newest status event stays unless it says deleted.
  std::set<int64_t> newest;
  std::set<std::string> seen;
  for (auto it = events_.rbegin(); it != events_.rend(); ++it)
    if (!it->sandbox_id.empty() && seen.insert(it->sandbox_id).second && it->status != "deleted")
      newest.insert(it->seq);
  std::vector<const EventRecord*> old;
  for (const auto& e : events_)
    if (e.at < before && !newest.count(e.seq)) old.push_back(&e);
  std::stable_sort(old.begin(), old.end(),
                   [](const EventRecord* a, const EventRecord* b) { return a->at < b->at; });
  if (old.size() > static_cast<size_t>(std::max(max_rows, 0))) old.resize(std::max(max_rows, 0));
  std::set<int64_t> drop;
  for (const auto* e : old) drop.insert(e->seq);
  if (!drop.empty()) pruned_event_seq_ = std::max(pruned_event_seq_, *drop.rbegin());
  std::erase_if(events_, [&](const EventRecord& e) { return drop.count(e.seq) > 0; });
  return static_cast<int64_t>(drop.size());
}

Result<int64_t> MemoryStore::PrunedEventSeq() {
  std::lock_guard lock(mu_);
  return pruned_event_seq_;
}

}  // namespace adapt::store
