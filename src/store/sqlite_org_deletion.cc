// SqliteStore's two steps of deleting an organization (org_store.h): closing it to its callers,
// and removing its rows. The tables are found by their org_id column, so a table a later
// migration adds is removed with the rest without a line here.
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>
#include <vector>

#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

// What still runs or may start a sandbox, counted by kind: "" when nothing does.
std::string RemainingCompute(SQLite::Database& db, const std::string& org_id) {
  struct Count {
    const char* sql;
    const char* what;
  };
  static const Count kCounts[] = {
      {"SELECT COUNT(*) FROM sandboxes WHERE org_id = ? AND status != 'deleted'",
       "sandbox(es) not deleted (including completed or failed ones, so their disks are cleaned "
       "up first: adapt sandbox delete ID)"},
      {"SELECT COUNT(*) FROM apps WHERE org_id = ?", "app(s) (adapt app delete ID)"},
      {"SELECT COUNT(*) FROM automations WHERE org_id = ?",
       "automation(s) (adapt automation delete ID)"},
      {"SELECT COUNT(*) FROM jobs WHERE org_id = ? AND status NOT IN "
       "('succeeded', 'failed', 'cancelled', 'infrastructure_failed')",
       "job(s) that have not ended (adapt job cancel ID)"},
  };
  std::string out;
  for (const auto& c : kCounts) {
    SQLite::Statement q(db, c.sql);
    q.bind(1, org_id);
    q.executeStep();
    int64_t n = q.getColumn(0).getInt64();
    if (n == 0) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + c.what;
  }
  return out;
}

Result<OrgRecord> ReadOrgForDeletion(SQLite::Database& db, const std::string& org_id) {
  SQLite::Statement q(db, "SELECT is_admin, deleting_at, name FROM orgs WHERE id = ?");
  q.bind(1, org_id);
  if (!q.executeStep()) return NotFound("organization " + org_id + " not found");
  OrgRecord org;
  org.id = org_id;
  org.is_admin = q.getColumn(0).getInt() != 0;
  org.deleting_at = q.getColumn(1).getInt64();
  org.name = q.getColumn(2).getString();
  return org;
}

void DeleteWhereOrg(SQLite::Database& db, const std::string& table, const std::string& org_id) {
  SQLite::Statement d(db, "DELETE FROM " + table + " WHERE org_id = ?");
  d.bind(1, org_id);
  d.exec();
}

// The tables that have an org_id column, but orgs itself.
std::vector<std::string> TablesWithOrgId(SQLite::Database& db) {
  std::vector<std::string> tables;
  SQLite::Statement q(db,
                      "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c "
                      "WHERE m.type = 'table' AND c.name = 'org_id' AND m.name != 'orgs' "
                      "ORDER BY m.name");
  while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  return tables;
}

}  // namespace

Status RefuseIfOrgDeleting(SQLite::Database& db, const std::string& org_id) {
  SQLite::Statement q(db, "SELECT 1 FROM orgs WHERE id = ? AND deleting_at != 0");
  q.bind(1, org_id);
  if (q.executeStep()) return Conflict("organization " + org_id + " is being deleted");
  return Status::Ok();
}

Status SqliteStore::CloseOrg(const std::string& org_id, int64_t now) {
  return Guard("closing organization", [&]() -> Status {
    StoreTransaction tx(db_);
    ASSIGN_OR_RETURN(OrgRecord org, ReadOrgForDeletion(db_, org_id));
    if (org.is_admin) return Conflict("the admin organization cannot be deleted");
    if (std::string left = RemainingCompute(db_, org_id); !left.empty())
      return Conflict("organization '" + org.name + "' still has " + left +
                      "; delete them first, then delete the organization");
    for (const char* table :
         {"oauth_grants", "dashboard_sessions", "api_keys", "users", "storage_tokens"})
      DeleteWhereOrg(db_, table, org_id);
    if (org.deleting_at == 0) {
      SQLite::Statement mark(db_, "UPDATE orgs SET deleting_at = ? WHERE id = ?");
      mark.bind(1, now);
      mark.bind(2, org_id);
      mark.exec();
    }
    tx.commit();
    return Status::Ok();
  });
}

Status SqliteStore::PurgeOrg(const std::string& org_id) {
  return Guard("removing organization", [&]() -> Status {
    StoreTransaction tx(db_);
    ASSIGN_OR_RETURN(OrgRecord org, ReadOrgForDeletion(db_, org_id));
    if (org.deleting_at == 0) return NotFound("organization " + org_id + " is not being deleted");
    SQLite::Statement live(
        db_, "SELECT COUNT(*) FROM sandboxes WHERE org_id = ? AND status != 'deleted'");
    live.bind(1, org_id);
    live.executeStep();
    if (int64_t n = live.getColumn(0).getInt64(); n > 0)
      return Conflict("organization '" + org.name + "' has " + std::to_string(n) +
                      " sandbox(es) not deleted, made while it was being deleted");
    // Rows keyed by a sandbox rather than the organization.
    SQLite::Statement networks(db_,
                               "DELETE FROM sandbox_networks WHERE sandbox_id IN "
                               "(SELECT id FROM sandboxes WHERE org_id = ?)");
    networks.bind(1, org_id);
    networks.exec();
    for (const auto& table : TablesWithOrgId(db_)) DeleteWhereOrg(db_, table, org_id);
    SQLite::Statement d(db_, "DELETE FROM orgs WHERE id = ?");
    d.bind(1, org_id);
    d.exec();
    tx.commit();
    return Status::Ok();
  });
}

}  // namespace adapt::store
