// SqliteStore's organizations and API keys, and the key check's reads of them: kept in
// memory (AuthReads) and dropped whenever SQLite's update hook sees a row of either table
// change, so a revoked key is refused at its next request.
#include <SQLiteCpp/SQLiteCpp.h>

#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

// At most this many keys and organizations are kept for the key check (AuthReads); past it
// the map starts over.
constexpr size_t kMaxAuthReads = 4096;

constexpr const char* kApiKeyColumns =
    "id, org_id, name, key_hash, is_admin, created_at, expires_at, seq";

ApiKeyRecord ReadApiKey(SQLite::Statement& q) {
  ApiKeyRecord k;
  k.id = q.getColumn(0).getString();
  k.org_id = q.getColumn(1).getString();
  k.name = q.getColumn(2).getString();
  k.key_hash = q.getColumn(3).getString();
  k.is_admin = q.getColumn(4).getInt() != 0;
  k.created_at = q.getColumn(5).getInt64();
  k.expires_at = q.getColumn(6).getInt64();
  k.seq = q.getColumn(7).getInt64();
  return k;
}

}  // namespace

void SqliteStore::OnRowChange(void* self, int, const char*, const char* table, long long) {
  std::string_view name(table);
  if (name == "api_keys" || name == "orgs")
    static_cast<SqliteStore*>(self)->auth_generation_.fetch_add(1);
}

void SqliteStore::RefreshAuthReads() {
  uint64_t now = auth_generation_.load();
  if (auth_reads_.generation == now) return;
  auth_reads_.keys.clear();
  auth_reads_.orgs.clear();
  auth_reads_.generation = now;
}

Result<OrgRecord> SqliteStore::CreateOrg(const OrgRecord& org) {
  return Guard<Result<OrgRecord>>("creating organization", [&]() -> Result<OrgRecord> {
    RETURN_IF_ERROR(InsertOrg(db_, org));
    return org;
  });
}

Status SqliteStore::InsertOrg(SQLite::Database& db, const OrgRecord& org) {
  SQLite::Statement exists(db, "SELECT 1 FROM orgs WHERE name = ?");
  exists.bind(1, org.name);
  if (exists.executeStep()) return Conflict("an organization named '" + org.name + "' exists");
  SQLite::Statement q(
      db, "INSERT INTO orgs(id, name, is_admin, created_at, registered) VALUES (?,?,?,?,?)");
  q.bind(1, org.id);
  q.bind(2, org.name);
  q.bind(3, org.is_admin ? 1 : 0);
  q.bind(4, org.created_at);
  q.bind(5, org.registered ? 1 : 0);
  q.exec();
  return Status::Ok();
}

Result<OrgRecord> SqliteStore::GetOrg(const std::string& id) {
  return Guard<Result<OrgRecord>>("reading organization", [&]() -> Result<OrgRecord> {
    RefreshAuthReads();
    if (auto kept = auth_reads_.orgs.find(id); kept != auth_reads_.orgs.end()) return kept->second;
    auto q = statements_.Get(
        "SELECT id, name, is_admin, created_at, registered, deleting_at FROM orgs WHERE id = ?");
    q->bind(1, id);
    if (!q->executeStep()) return NotFound("organization not found");
    OrgRecord org = ReadOrg(*q);
    if (auth_reads_.orgs.size() >= kMaxAuthReads) auth_reads_.orgs.clear();
    auth_reads_.orgs.emplace(id, org);
    return org;
  });
}

Result<OrgRecord> SqliteStore::FindOrgByName(const std::string& name) {
  return FindOrg(
      "SELECT id, name, is_admin, created_at, registered, deleting_at FROM orgs WHERE name = ?",
      name);
}

Result<std::vector<OrgRecord>> SqliteStore::ListOrgs() {
  return Guard<Result<std::vector<OrgRecord>>>(
      "listing organizations", [&]() -> Result<std::vector<OrgRecord>> {
        SQLite::Statement q(
            db_,
            "SELECT id, name, is_admin, created_at, registered, deleting_at, rowid FROM orgs "
            "ORDER BY rowid DESC");
        std::vector<OrgRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadOrg(q));
          // The rowid stands in for an insertion sequence (migration_list_sequences.cc):
          // it is reused only after the newest organization itself is purged.
          out.back().seq = q.getColumn(6).getInt64();
        }
        return out;
      });
}

Status SqliteStore::CreateApiKey(const ApiKeyRecord& k) {
  return Guard("creating API key", [&]() -> Status {
    StoreTransaction tx(db_);
    RETURN_IF_ERROR(RefuseIfOrgDeleting(db_, k.org_id));
    SQLite::Statement q(db_,
                        "INSERT INTO api_keys(id, org_id, name, key_hash, is_admin, created_at, "
                        "expires_at) VALUES (?,?,?,?,?,?,?)");
    q.bind(1, k.id);
    q.bind(2, k.org_id);
    q.bind(3, k.name);
    q.bind(4, k.key_hash);
    q.bind(5, k.is_admin ? 1 : 0);
    q.bind(6, k.created_at);
    q.bind(7, k.expires_at);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Result<ApiKeyRecord> SqliteStore::FindApiKey(const std::string& key_hash) {
  return Guard<Result<ApiKeyRecord>>("finding API key", [&]() -> Result<ApiKeyRecord> {
    static const std::string sql =
        std::string("SELECT ") + kApiKeyColumns + " FROM api_keys WHERE key_hash = ?";
    RefreshAuthReads();
    if (auto kept = auth_reads_.keys.find(key_hash); kept != auth_reads_.keys.end())
      return kept->second;
    auto q = statements_.Get(sql);
    q->bind(1, key_hash);
    if (!q->executeStep()) return NotFound("unknown API key");
    ApiKeyRecord key = ReadApiKey(*q);
    if (auth_reads_.keys.size() >= kMaxAuthReads) auth_reads_.keys.clear();
    auth_reads_.keys.emplace(key_hash, key);
    return key;
  });
}

Result<std::vector<ApiKeyRecord>> SqliteStore::ListApiKeys(const std::string& org_id) {
  return Guard<Result<std::vector<ApiKeyRecord>>>(
      "listing API keys", [&]() -> Result<std::vector<ApiKeyRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kApiKeyColumns +
                                     " FROM api_keys WHERE org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        std::vector<ApiKeyRecord> out;
        while (q.executeStep()) out.push_back(ReadApiKey(q));
        return out;
      });
}

Status SqliteStore::DeleteApiKey(const std::string& org_id, const std::string& key_id) {
  return Guard("deleting API key", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement del(db_, "DELETE FROM api_keys WHERE id = ? AND org_id = ?");
    del.bind(1, key_id);
    del.bind(2, org_id);
    if (del.exec() == 0) return NotFound("API key " + key_id + " not found");
    SQLite::Statement grants(db_, "DELETE FROM oauth_grants WHERE key_id = ?");
    grants.bind(1, key_id);
    grants.exec();
    DeleteDashboardSessionsOf(key_id);
    tx.commit();
    return Status::Ok();
  });
}

OrgRecord SqliteStore::ReadOrg(SQLite::Statement& q) {
  return {q.getColumn(0).getString(), q.getColumn(1).getString(),   q.getColumn(2).getInt() != 0,
          q.getColumn(3).getInt64(),  q.getColumn(4).getInt() != 0, q.getColumn(5).getInt64()};
}

Result<OrgRecord> SqliteStore::FindOrg(const char* sql, const std::string& arg) {
  return Guard<Result<OrgRecord>>("reading organization", [&]() -> Result<OrgRecord> {
    auto q = statements_.Get(sql);
    q->bind(1, arg);
    if (!q->executeStep()) return NotFound("organization not found");
    return ReadOrg(*q);
  });
}

}  // namespace adapt::store
