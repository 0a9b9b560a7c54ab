// SqliteStore: warm pool members (sandboxes booted ahead of any request).
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

PoolMemberRecord ReadMember(SQLite::Statement& q) {
  return {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString(),
          q.getColumn(3).getInt64()};
}

}  // namespace

Status SqliteStore::PutPoolMember(const PoolMemberRecord& m) {
  return Guard("recording a warm pool member", [&]() -> Status {
    SQLite::Statement q(db_,
                        "INSERT OR REPLACE INTO pool_members(id, pool_key, state, created_at) "
                        "VALUES (?,?,?,?)");
    q.bind(1, m.id);
    q.bind(2, m.pool_key);
    q.bind(3, m.state);
    q.bind(4, m.created_at);
    q.exec();
    return Status::Ok();
  });
}

Result<std::vector<PoolMemberRecord>> SqliteStore::ListPoolMembers() {
  return Guard<Result<std::vector<PoolMemberRecord>>>(
      "listing warm pool members", [&]() -> Result<std::vector<PoolMemberRecord>> {
        SQLite::Statement q(db_,
                            "SELECT id, pool_key, state, created_at FROM pool_members "
                            "ORDER BY created_at, id");
        std::vector<PoolMemberRecord> out;
        while (q.executeStep()) out.push_back(ReadMember(q));
        return out;
      });
}

Status SqliteStore::DeletePoolMember(const std::string& id) {
  return Guard("forgetting a warm pool member", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM pool_members WHERE id = ?");
    q.bind(1, id);
    q.exec();
    return Status::Ok();
  });
}

Result<std::optional<PoolMemberRecord>> SqliteStore::ClaimPoolMember(const std::string& pool_key) {
  return Guard<Result<std::optional<PoolMemberRecord>>>(
      "claiming a warm pool member", [&]() -> Result<std::optional<PoolMemberRecord>> {
        StoreTransaction tx(db_);
        SQLite::Statement q(db_,
                            "SELECT id, pool_key, state, created_at FROM pool_members "
                            "WHERE pool_key = ? AND state = 'ready' ORDER BY created_at, id "
                            "LIMIT 1");
        q.bind(1, pool_key);
        if (!q.executeStep()) return std::optional<PoolMemberRecord>();
        PoolMemberRecord m = ReadMember(q);
        q.reset();
        SQLite::Statement del(db_, "DELETE FROM pool_members WHERE id = ? AND state = 'ready'");
        del.bind(1, m.id);
        if (del.exec() != 1) return std::optional<PoolMemberRecord>();
        tx.commit();
        return std::optional<PoolMemberRecord>(m);
      });
}

}  // namespace adapt::store
