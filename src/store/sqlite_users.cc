// SqliteStore: the users who sign in to organizations.
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kUserColumns = "id, org_id, email, password_hash, created_at";
// What ReadUser reads: the columns, then the insertion sequence the store assigns.
constexpr const char* kUserSelect = "SELECT id, org_id, email, password_hash, created_at, seq";

UserRecord ReadUser(SQLite::Statement& q) {
  UserRecord r;
  r.id = q.getColumn(0).getString();
  r.org_id = q.getColumn(1).getString();
  r.email = q.getColumn(2).getString();
  r.password_hash = q.getColumn(3).getString();
  r.created_at = q.getColumn(4).getInt64();
  r.seq = q.getColumn(5).getInt64();
  return r;
}

// Inserts `user` inside the caller's transaction; Conflict for a taken email.
Status InsertUser(SQLite::Database& db, const UserRecord& user) {
  SQLite::Statement taken(db, "SELECT 1 FROM users WHERE email = ?");
  taken.bind(1, user.email);
  if (taken.executeStep()) return Conflict("a user with this email exists");
  SQLite::Statement q(db,
                      std::string("INSERT INTO users(") + kUserColumns + ") VALUES (?,?,?,?,?)");
  q.bind(1, user.id);
  q.bind(2, user.org_id);
  q.bind(3, user.email);
  q.bind(4, user.password_hash);
  q.bind(5, user.created_at);
  q.exec();
  return Status::Ok();
}

}  // namespace

Status SqliteStore::CreateUser(const UserRecord& user) {
  return Guard("creating user", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement org(db_, "SELECT 1 FROM orgs WHERE id = ?");
    org.bind(1, user.org_id);
    if (!org.executeStep()) return NotFound("organization " + user.org_id + " not found");
    RETURN_IF_ERROR(RefuseIfOrgDeleting(db_, user.org_id));
    RETURN_IF_ERROR(InsertUser(db_, user));
    tx.commit();
    return Status::Ok();
  });
}

Status SqliteStore::CreateOrgWithUser(const OrgRecord& org, const UserRecord& user) {
  return Guard("creating organization and user", [&]() -> Status {
    StoreTransaction tx(db_);
    RETURN_IF_ERROR(InsertOrg(db_, org));
    RETURN_IF_ERROR(InsertUser(db_, user));
    tx.commit();
    return Status::Ok();
  });
}

Result<UserRecord> SqliteStore::FindUserByEmail(const std::string& email) {
  return Guard<Result<UserRecord>>("finding user", [&]() -> Result<UserRecord> {
    SQLite::Statement q(db_, std::string(kUserSelect) + " FROM users WHERE email = ?");
    q.bind(1, email);
    if (!q.executeStep()) return NotFound("no user with this email");
    return ReadUser(q);
  });
}

Result<std::vector<UserRecord>> SqliteStore::ListUsers(const std::string& org_id) {
  return Guard<Result<std::vector<UserRecord>>>(
      "listing users", [&]() -> Result<std::vector<UserRecord>> {
        SQLite::Statement q(db_, std::string(kUserSelect) +
                                     " FROM users WHERE ? = '' OR org_id = ? "
                                     "ORDER BY seq");
        q.bind(1, org_id);
        q.bind(2, org_id);
        std::vector<UserRecord> out;
        while (q.executeStep()) out.push_back(ReadUser(q));
        return out;
      });
}

Result<UserRecord> SqliteStore::GetUser(const std::string& id) {
  return Guard<Result<UserRecord>>("reading user", [&]() -> Result<UserRecord> {
    SQLite::Statement q(db_, std::string(kUserSelect) + " FROM users WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return NotFound("user '" + id + "' not found");
    return ReadUser(q);
  });
}

Result<UserRecord> SqliteStore::DeleteUser(const std::string& id) {
  return Guard<Result<UserRecord>>("deleting user", [&]() -> Result<UserRecord> {
    StoreTransaction tx(db_);
    SQLite::Statement q(db_, std::string(kUserSelect) + " FROM users WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return NotFound("user '" + id + "' not found");
    UserRecord user = ReadUser(q);
    SQLite::Statement n(db_, "SELECT COUNT(*) FROM users WHERE org_id = ?");
    n.bind(1, user.org_id);
    n.executeStep();
    if (n.getColumn(0).getInt64() <= 1)
      return Conflict("user '" + id + "' is the last user of organization '" + user.org_id +
                      "', its owner; add another user first");
    SQLite::Statement del(db_, "DELETE FROM users WHERE id = ?");
    del.bind(1, id);
    del.exec();
    SQLite::Statement grants(db_, "DELETE FROM oauth_grants WHERE key_id = ?");
    grants.bind(1, id);
    grants.exec();
    DeleteDashboardSessionsOf(id);
    tx.commit();
    return user;
  });
}

Status SqliteStore::SetUserPassword(const std::string& id, const std::string& password_hash) {
  return Guard("changing password", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement q(db_, "UPDATE users SET password_hash = ? WHERE id = ?");
    q.bind(1, password_hash);
    q.bind(2, id);
    if (q.exec() == 0) return NotFound("user '" + id + "' not found");
    SQLite::Statement grants(db_, "DELETE FROM oauth_grants WHERE key_id = ?");
    grants.bind(1, id);
    grants.exec();
    DeleteDashboardSessionsOf(id);
    tx.commit();
    return Status::Ok();
  });
}

}  // namespace adapt::store
