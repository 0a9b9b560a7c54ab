// SqliteStore: organizations' PostgreSQL databases (the password sealed; see database_store.h).
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kDatabaseColumns =
    "org_id, name, status, sealed_password, created_at, updated_at";

DatabaseRecord ReadDatabase(SQLite::Statement& q) {
  DatabaseRecord r;
  r.org_id = q.getColumn(0).getString();
  r.name = q.getColumn(1).getString();
  r.status = q.getColumn(2).getString();
  r.sealed_password = q.getColumn(3).getString();
  r.created_at = q.getColumn(4).getInt64();
  r.updated_at = q.getColumn(5).getInt64();
  return r;
}

}  // namespace

Status SqliteStore::PutDatabase(const DatabaseRecord& d) {
  return Guard("saving the organization's database", [&]() -> Status {
    StoreTransaction tx(db_);
    // As a new volume (PutVolume): none for an organization being deleted.
    SQLite::Statement known(db_, "SELECT 1 FROM databases WHERE org_id = ?");
    known.bind(1, d.org_id);
    if (!known.executeStep()) RETURN_IF_ERROR(RefuseIfOrgDeleting(db_, d.org_id));
    SQLite::Statement q(db_,
                        "INSERT INTO databases(org_id, name, status, sealed_password, created_at, "
                        "updated_at) VALUES (?,?,?,?,?,?) ON CONFLICT(org_id) DO UPDATE SET "
                        "name = excluded.name, status = excluded.status, "
                        "sealed_password = excluded.sealed_password, "
                        "updated_at = excluded.updated_at");
    q.bind(1, d.org_id);
    q.bind(2, d.name);
    q.bind(3, d.status);
    q.bind(4, d.sealed_password);
    q.bind(5, d.created_at);
    q.bind(6, d.updated_at);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Result<DatabaseRecord> SqliteStore::GetDatabase(const std::string& org_id) {
  return Guard<Result<DatabaseRecord>>(
      "reading the organization's database", [&]() -> Result<DatabaseRecord> {
        SQLite::Statement q(
            db_, std::string("SELECT ") + kDatabaseColumns + " FROM databases WHERE org_id = ?");
        q.bind(1, org_id);
        if (!q.executeStep()) return NotFound("the organization has no database yet");
        return ReadDatabase(q);
      });
}

Result<std::vector<DatabaseRecord>> SqliteStore::ListDatabases() {
  return Guard<Result<std::vector<DatabaseRecord>>>(
      "listing databases", [&]() -> Result<std::vector<DatabaseRecord>> {
        SQLite::Statement q(
            db_, std::string("SELECT ") + kDatabaseColumns + " FROM databases ORDER BY org_id");
        std::vector<DatabaseRecord> out;
        while (q.executeStep()) out.push_back(ReadDatabase(q));
        return out;
      });
}

Status SqliteStore::DeleteDatabase(const std::string& org_id) {
  return Guard("deleting the organization's database", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM databases WHERE org_id = ?");
    q.bind(1, org_id);
    if (q.exec() == 0) return NotFound("the organization has no database");
    return Status::Ok();
  });
}

}  // namespace adapt::store
