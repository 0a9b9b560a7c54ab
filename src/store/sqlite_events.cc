// SqliteStore: the events table's retention (EventStore::PruneEvents). Each call is one short
// transaction over at most `max_rows` rows found through the events_by_time index, so that a
// large backlog is worked off in small steps between other writers, never by a scan of the
// whole table.
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

Result<int64_t> SqliteStore::PruneEvents(int64_t before, int max_rows) {
  return Guard<Result<int64_t>>("pruning events", [&]() -> Result<int64_t> {
    StoreTransaction tx(db_);
    // A sandbox's newest status event is its state (usage metering and its own stream read
    // it): it stays until a newer one comes or it says deleted. Those kept are met again by
    // every pass, one per live sandbox unchanged for the whole retention; the look for a
    // newer one is one step of events_by_sandbox.
    SQLite::Statement pick(
        db_,
        "SELECT seq FROM events AS e WHERE at < ?1 AND (sandbox_id = '' OR status = 'deleted' "
        "OR EXISTS (SELECT 1 FROM events AS n WHERE n.sandbox_id = e.sandbox_id AND "
        "n.seq > e.seq)) ORDER BY at LIMIT ?2");
    pick.bind(1, before);
    pick.bind(2, max_rows);
    std::vector<int64_t> seqs;
    while (pick.executeStep()) seqs.push_back(pick.getColumn(0).getInt64());
    if (seqs.empty()) return int64_t{0};
    SQLite::Statement drop(db_, "DELETE FROM events WHERE seq = ?");
    int64_t highest = 0;
    for (int64_t seq : seqs) {
      drop.bind(1, seq);
      drop.exec();
      drop.reset();
      highest = std::max(highest, seq);
    }
    SQLite::Statement mark(db_,
                           "INSERT INTO event_retention(id, pruned_seq) VALUES (1, ?) ON CONFLICT "
                           "(id) DO UPDATE SET pruned_seq = MAX(pruned_seq, excluded.pruned_seq)");
    mark.bind(1, highest);
    mark.exec();
    tx.commit();
    return static_cast<int64_t>(seqs.size());
  });
}

Result<int64_t> SqliteStore::PrunedEventSeq() {
  return Guard<Result<int64_t>>("reading the events' retention", [&]() -> Result<int64_t> {
    SQLite::Statement q(db_, "SELECT COALESCE(MAX(pruned_seq), 0) FROM event_retention");
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

}  // namespace adapt::store
