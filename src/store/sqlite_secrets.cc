// SqliteStore: organization secrets (sealed values; the store never sees a plain one).
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kSecretColumns = "org_id, name, version, ciphertext, created_at, updated_at";

SecretRecord ReadSecret(SQLite::Statement& q) {
  SecretRecord r;
  r.org_id = q.getColumn(0).getString();
  r.name = q.getColumn(1).getString();
  r.version = q.getColumn(2).getInt64();
  r.ciphertext = q.getColumn(3).getString();
  r.created_at = q.getColumn(4).getInt64();
  r.updated_at = q.getColumn(5).getInt64();
  return r;
}

}  // namespace

Result<SecretRecord> SqliteStore::PutSecret(const SecretRecord& s) {
  return Guard<Result<SecretRecord>>("saving secret", [&]() -> Result<SecretRecord> {
    StoreTransaction tx(db_);
    SQLite::Statement q(db_,
                        "INSERT INTO secrets(org_id, name, version, ciphertext, created_at, "
                        "updated_at) VALUES (?,?,1,?,?,?) ON CONFLICT(org_id, name) DO UPDATE SET "
                        "version = version + 1, ciphertext = excluded.ciphertext, "
                        "updated_at = excluded.updated_at");
    q.bind(1, s.org_id);
    q.bind(2, s.name);
    q.bind(3, s.ciphertext);
    q.bind(4, s.updated_at);
    q.bind(5, s.updated_at);
    q.exec();
    SQLite::Statement get(db_, std::string("SELECT ") + kSecretColumns +
                                   " FROM secrets WHERE org_id = ? AND name = ?");
    get.bind(1, s.org_id);
    get.bind(2, s.name);
    if (!get.executeStep()) return Internal("secret '" + s.name + "' vanished while saving");
    SecretRecord out = ReadSecret(get);
    tx.commit();
    return out;
  });
}

Result<SecretRecord> SqliteStore::GetSecret(const std::string& org_id, const std::string& name) {
  return Guard<Result<SecretRecord>>("reading secret", [&]() -> Result<SecretRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kSecretColumns +
                                 " FROM secrets WHERE org_id = ? AND name = ?");
    q.bind(1, org_id);
    q.bind(2, name);
    if (!q.executeStep()) return NotFound("secret '" + name + "' not found");
    return ReadSecret(q);
  });
}

Result<std::vector<SecretRecord>> SqliteStore::ListSecrets(const std::string& org_id) {
  return Guard<Result<std::vector<SecretRecord>>>(
      "listing secrets", [&]() -> Result<std::vector<SecretRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kSecretColumns +
                                     ", seq FROM secrets WHERE org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        std::vector<SecretRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadSecret(q));
          out.back().seq = q.getColumn(6).getInt64();
        }
        return out;
      });
}

Status SqliteStore::DeleteSecret(const std::string& org_id, const std::string& name) {
  return Guard("deleting secret", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM secrets WHERE org_id = ? AND name = ?");
    q.bind(1, org_id);
    q.bind(2, name);
    if (q.exec() == 0) return NotFound("secret '" + name + "' not found");
    return Status::Ok();
  });
}

}  // namespace adapt::store
