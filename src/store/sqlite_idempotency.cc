// IdempotencyStore on SQLite: the idempotency_keys table (migration 34).
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

Result<std::optional<std::string>> SqliteStore::FindClaimLocked(const IdempotencyClaim& claim) {
  SQLite::Statement q(db_,
                      "SELECT body_hash, object_id FROM idempotency_keys "
                      "WHERE org_id = ? AND scope = ? AND key = ?");
  q.bind(1, claim.org_id);
  q.bind(2, claim.scope);
  q.bind(3, claim.key.key);
  if (!q.executeStep()) return std::optional<std::string>();
  if (q.getColumn(0).getString() != claim.key.body_hash) return IdempotencyKeyReused();
  return std::optional<std::string>(q.getColumn(1).getString());
}

void SqliteStore::InsertClaimLocked(const IdempotencyClaim& claim, const std::string& object_id) {
  SQLite::Statement k(db_,
                      "INSERT INTO idempotency_keys(org_id, scope, key, body_hash, object_id, "
                      "created_at) VALUES (?,?,?,?,?,?)");
  k.bind(1, claim.org_id);
  k.bind(2, claim.scope);
  k.bind(3, claim.key.key);
  k.bind(4, claim.key.body_hash);
  k.bind(5, object_id);
  k.bind(6, claim.created_at);
  k.exec();
}

Result<std::optional<std::string>> SqliteStore::FindIdempotentCreate(
    const IdempotencyClaim& claim) {
  return Guard<Result<std::optional<std::string>>>("reading idempotency key",
                                                   [&] { return FindClaimLocked(claim); });
}

Result<IdempotentCreate> SqliteStore::CreateOnce(
    const IdempotencyClaim& claim, const std::function<Result<std::string>()>& insert) {
  return Guard<Result<IdempotentCreate>>(
      "creating with an idempotency key", [&]() -> Result<IdempotentCreate> {
        StoreTransaction tx(db_);
        ASSIGN_OR_RETURN(std::optional<std::string> earlier, FindClaimLocked(claim));
        if (earlier) return IdempotentCreate{*earlier, true};
        ASSIGN_OR_RETURN(std::string id, insert());
        InsertClaimLocked(claim, id);
        tx.commit();
        return IdempotentCreate{id, false};
      });
}

Status SqliteStore::PurgeIdempotencyKeys(int64_t before) {
  return Guard("purging idempotency keys", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM idempotency_keys WHERE created_at < ?");
    q.bind(1, before);
    q.exec();
    return Status::Ok();
  });
}

}  // namespace adapt::store
