// SqliteStore: the web dashboard's sign-in sessions (store/dashboard_session_store.h).
#include <algorithm>

#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

Status SqliteStore::CreateDashboardSession(const DashboardSessionRecord& s, int64_t max_open) {
  return Guard("opening dashboard session", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement who(db_,
                          "SELECT 1 FROM users WHERE id = ? UNION ALL "
                          "SELECT 1 FROM api_keys WHERE id = ?");
    who.bind(1, s.key_id);
    who.bind(2, s.key_id);
    if (!who.executeStep()) return NotFound("'" + s.key_id + "' no longer exists");
    SQLite::Statement prune(
        db_, "DELETE FROM dashboard_sessions WHERE expires_at <= ? OR revoked_at != 0");
    prune.bind(1, s.created_at);
    prune.exec();
    // Room is made, never refused: an organization at its share (a tenth of the whole) gives
    // up its oldest session, and a full table the oldest of the organization holding the
    // most. A refusal let one tenant signing in with its own key in a loop lock every user
    // of every organization out of the dashboard for the sessions' 12 hours.
    auto count = [&](const char* sql) {
      SQLite::Statement c(db_, sql);
      if (std::string(sql).find('?') != std::string::npos) c.bind(1, s.org_id);
      c.executeStep();
      return c.getColumn(0).getInt64();
    };
    auto drop_oldest_of = [&](const std::string& org_id) {
      SQLite::Statement d(db_,
                          "DELETE FROM dashboard_sessions WHERE token_hash = (SELECT token_hash "
                          "FROM dashboard_sessions WHERE org_id = ? ORDER BY created_at LIMIT 1)");
      d.bind(1, org_id);
      d.exec();
    };
    const int64_t share = std::max<int64_t>(1, max_open / 10);
    if (count("SELECT COUNT(*) FROM dashboard_sessions WHERE org_id = ?") >= share)
      drop_oldest_of(s.org_id);
    if (count("SELECT COUNT(*) FROM dashboard_sessions") >= max_open) {
      SQLite::Statement most(db_,
                             "SELECT org_id FROM dashboard_sessions GROUP BY org_id "
                             "ORDER BY COUNT(*) DESC LIMIT 1");
      if (most.executeStep()) drop_oldest_of(most.getColumn(0).getString());
    }
    SQLite::Statement q(db_,
                        "INSERT INTO dashboard_sessions(token_hash, org_id, key_id, created_at, "
                        "expires_at, revoked_at) VALUES (?,?,?,?,?,0)");
    q.bind(1, s.token_hash);
    q.bind(2, s.org_id);
    q.bind(3, s.key_id);
    q.bind(4, s.created_at);
    q.bind(5, s.expires_at);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Result<DashboardSessionRecord> SqliteStore::FindDashboardSession(const std::string& token_hash,
                                                                 int64_t now) {
  return Guard<Result<DashboardSessionRecord>>(
      "reading dashboard session", [&]() -> Result<DashboardSessionRecord> {
        SQLite::Statement q(db_,
                            "SELECT token_hash, org_id, key_id, created_at, expires_at, revoked_at "
                            "FROM dashboard_sessions "
                            "WHERE token_hash = ? AND revoked_at = 0 AND expires_at > ?");
        q.bind(1, token_hash);
        q.bind(2, now);
        if (!q.executeStep()) return NotFound("no such dashboard session");
        DashboardSessionRecord r;
        r.token_hash = q.getColumn(0).getString();
        r.org_id = q.getColumn(1).getString();
        r.key_id = q.getColumn(2).getString();
        r.created_at = q.getColumn(3).getInt64();
        r.expires_at = q.getColumn(4).getInt64();
        r.revoked_at = q.getColumn(5).getInt64();
        return r;
      });
}

Status SqliteStore::RevokeDashboardSession(const std::string& token_hash, int64_t now) {
  return Guard("revoking dashboard session", [&]() -> Status {
    SQLite::Statement q(db_,
                        "UPDATE dashboard_sessions SET revoked_at = ? "
                        "WHERE token_hash = ? AND revoked_at = 0");
    q.bind(1, now);
    q.bind(2, token_hash);
    q.exec();
    return Status::Ok();
  });
}

// The sessions of a deleted key or user, or of a user whose password changed, inside the
// caller's transaction.
void SqliteStore::DeleteDashboardSessionsOf(const std::string& key_id) {
  SQLite::Statement q(db_, "DELETE FROM dashboard_sessions WHERE key_id = ?");
  q.bind(1, key_id);
  q.exec();
}

}  // namespace adapt::store
