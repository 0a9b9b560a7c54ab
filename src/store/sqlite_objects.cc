// SqliteStore: object storage (objects, storage tokens) and static sites.
#include "store/object_quota.h"
#include "store/sandbox_env_column.h"
#include "store/site_files_codec.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kObjectColumns =
    "org_id, key, blob, size, sha256, etag, content_type, created_at";
constexpr const char* kTokenColumns =
    "id, org_id, sandbox_id, name, expires_at, revoked_at, created_at";
// What ReadToken reads: the columns, then the insertion sequence the store assigns.
constexpr const char* kTokenSelect =
    "SELECT id, org_id, sandbox_id, name, expires_at, revoked_at, created_at, seq";
constexpr const char* kSiteColumns = "id, org_id, name, hostname, release_id, created_at";

// The least string above every string that starts with `prefix` (in byte order); "" when none
// is (an empty prefix, or one of 0xff bytes only).
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty())
    prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

ObjectRecord ReadObject(SQLite::Statement& q) {
  ObjectRecord r;
  r.org_id = q.getColumn(0).getString();
  r.key = q.getColumn(1).getString();
  r.blob = q.getColumn(2).getString();
  r.size = static_cast<uint64_t>(q.getColumn(3).getInt64());
  r.sha256 = q.getColumn(4).getString();
  r.etag = q.getColumn(5).getString();
  r.content_type = q.getColumn(6).getString();
  r.created_at = q.getColumn(7).getInt64();
  return r;
}

StorageTokenRecord ReadToken(SQLite::Statement& q) {
  StorageTokenRecord r;
  r.id = q.getColumn(0).getString();
  r.org_id = q.getColumn(1).getString();
  r.sandbox_id = q.getColumn(2).getString();
  r.name = q.getColumn(3).getString();
  r.expires_at = q.getColumn(4).getInt64();
  r.revoked_at = q.getColumn(5).getInt64();
  r.created_at = q.getColumn(6).getInt64();
  r.seq = q.getColumn(7).getInt64();
  return r;
}

SiteRecord ReadSite(SQLite::Statement& q) {
  SiteRecord r;
  r.id = q.getColumn(0).getString();
  r.org_id = q.getColumn(1).getString();
  r.name = q.getColumn(2).getString();
  r.hostname = q.getColumn(3).getString();
  r.release_id = q.getColumn(4).getString();
  r.created_at = q.getColumn(5).getInt64();
  return r;
}

void BlobsOf(const std::string& files_column, std::vector<std::string>& out) {
  for (const auto& [_, f] : DecodeSiteFiles(files_column))
    if (!f.blob.empty()) out.push_back(f.blob);
}

void InsertSiteRelease(SQLite::Database& db, const SiteReleaseRecord& release) {
  uint64_t bytes = 0;
  for (const auto& [_, f] : release.files) bytes += f.size;
  SQLite::Statement r(db,
                      "INSERT INTO site_releases(id, site_id, org_id, source_prefix, files, "
                      "created_at, bytes) VALUES (?,?,?,?,?,?,?)");
  r.bind(1, release.id);
  r.bind(2, release.site_id);
  r.bind(3, release.org_id);
  r.bind(4, release.source_prefix);
  r.bind(5, EncodeSiteFiles(release.files));
  r.bind(6, release.created_at);
  r.bind(7, static_cast<int64_t>(bytes));
  r.exec();
}

void UpsertSite(SQLite::Database& db, const SiteRecord& s) {
  SQLite::Statement q(db, std::string("INSERT INTO sites(") + kSiteColumns +
                              ") VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                              "release_id = excluded.release_id");
  q.bind(1, s.id);
  q.bind(2, s.org_id);
  q.bind(3, s.name);
  q.bind(4, s.hostname);
  q.bind(5, s.release_id);
  q.bind(6, s.created_at);
  q.exec();
}

}  // namespace

Result<std::string> SqliteStore::PutObject(const ObjectRecord& o) {
  return PutObjectWithinQuota(o, 0);
}

Result<std::string> SqliteStore::PutObjectWithinQuota(const ObjectRecord& o, uint64_t quota_bytes) {
  return Guard<Result<std::string>>("saving object", [&]() -> Result<std::string> {
    StoreTransaction tx(db_);
    // An upload that commits after its organization's deletion began (it was authenticated
    // before the close) would leave a blob no row names once the rows are purged.
    RETURN_IF_ERROR(RefuseIfOrgDeleting(db_, o.org_id));
    std::string old;
    uint64_t old_size = 0;
    {
      SQLite::Statement q(db_, "SELECT blob, size FROM objects WHERE org_id = ? AND key = ?");
      q.bind(1, o.org_id);
      q.bind(2, o.key);
      if (q.executeStep()) {
        old = q.getColumn(0).getString();
        old_size = static_cast<uint64_t>(q.getColumn(1).getInt64());
      }
    }
    if (quota_bytes > 0) {
      const uint64_t used = StoredBytes(db_, o.org_id);
      // Replacing an object frees its old bytes.
      if (used - old_size + o.size > quota_bytes) {
        return ObjectQuotaExceeded(used - old_size + o.size, quota_bytes);
      }
    }
    SQLite::Statement q(db_,
                        "INSERT OR REPLACE INTO objects(org_id, key, blob, size, sha256, etag, "
                        "content_type, created_at) VALUES (?,?,?,?,?,?,?,?)");
    q.bind(1, o.org_id);
    q.bind(2, o.key);
    q.bind(3, o.blob);
    q.bind(4, static_cast<int64_t>(o.size));
    q.bind(5, o.sha256);
    q.bind(6, o.etag);
    q.bind(7, o.content_type);
    q.bind(8, o.created_at);
    q.exec();
    tx.commit();
    return old;
  });
}

Result<uint64_t> SqliteStore::ObjectBytes(const std::string& org_id) {
  return Guard<Result<uint64_t>>("summing object sizes",
                                 [&]() -> Result<uint64_t> { return StoredBytes(db_, org_id); });
}

Result<ObjectRecord> SqliteStore::GetObject(const std::string& org_id, const std::string& key) {
  return Guard<Result<ObjectRecord>>("reading object", [&]() -> Result<ObjectRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kObjectColumns +
                                 " FROM objects WHERE org_id = ? AND key = ?");
    q.bind(1, org_id);
    q.bind(2, key);
    if (!q.executeStep()) return NotFound("object " + key + " not found");
    return ReadObject(q);
  });
}

Result<std::vector<ObjectRecord>> SqliteStore::ListObjects(const std::string& org_id,
                                                           const std::string& prefix,
                                                           const std::string& after, size_t limit) {
  return Guard<Result<std::vector<ObjectRecord>>>(
      "listing objects", [&]() -> Result<std::vector<ObjectRecord>> {
        // One range of the primary key's index: from the later of `after` and the prefix to
        // the prefix's end.
        const bool from_prefix = after < prefix;
        const std::string end = PrefixEnd(prefix);
        SQLite::Statement q(db_, std::string("SELECT ") + kObjectColumns +
                                     " FROM objects WHERE org_id = ? AND key " +
                                     (from_prefix ? ">=" : ">") + " ?" +
                                     (end.empty() ? "" : " AND key < ?") + " ORDER BY key LIMIT ?");
        int at = 1;
        q.bind(at++, org_id);
        q.bind(at++, from_prefix ? prefix : after);
        if (!end.empty()) q.bind(at++, end);
        q.bind(at, static_cast<int64_t>(limit));
        std::vector<ObjectRecord> out;
        while (q.executeStep()) out.push_back(ReadObject(q));
        return out;
      });
}

Result<std::string> SqliteStore::DeleteObject(const std::string& org_id, const std::string& key) {
  return Guard<Result<std::string>>("deleting object", [&]() -> Result<std::string> {
    SQLite::Statement q(db_, "DELETE FROM objects WHERE org_id = ? AND key = ? RETURNING blob");
    q.bind(1, org_id);
    q.bind(2, key);
    if (!q.executeStep()) return NotFound("object " + key + " not found");
    return q.getColumn(0).getString();
  });
}

Result<std::vector<std::string>> SqliteStore::ListReferencedBlobs() {
  return Guard<Result<std::vector<std::string>>>(
      "listing blobs", [&]() -> Result<std::vector<std::string>> {
        std::vector<std::string> out;
        SQLite::Statement q(db_, "SELECT blob FROM objects");
        while (q.executeStep()) out.push_back(q.getColumn(0).getString());
        SQLite::Statement r(db_, "SELECT files FROM site_releases");
        while (r.executeStep()) BlobsOf(r.getColumn(0).getString(), out);
        SQLite::Statement a(db_, "SELECT blob FROM app_releases");
        while (a.executeStep()) out.push_back(a.getColumn(0).getString());
        return out;
      });
}

Status SqliteStore::PutStorageToken(const StorageTokenRecord& t) {
  return Guard("saving storage token", [&]() -> Status {
    SQLite::Statement q(db_, std::string("INSERT INTO storage_tokens(") + kTokenColumns +
                                 ") VALUES (?,?,?,?,?,?,?)");
    q.bind(1, t.id);
    q.bind(2, t.org_id);
    q.bind(3, t.sandbox_id);
    q.bind(4, t.name);
    q.bind(5, t.expires_at);
    q.bind(6, t.revoked_at);
    q.bind(7, t.created_at);
    q.exec();
    return Status::Ok();
  });
}

Result<StorageTokenRecord> SqliteStore::GetStorageToken(const std::string& id) {
  return Guard<Result<StorageTokenRecord>>(
      "reading storage token", [&]() -> Result<StorageTokenRecord> {
        SQLite::Statement q(db_, std::string(kTokenSelect) + " FROM storage_tokens WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep()) return NotFound("storage token " + id + " not found");
        return ReadToken(q);
      });
}

Result<std::vector<StorageTokenRecord>> SqliteStore::ListStorageTokens(const std::string& org_id) {
  return Guard<Result<std::vector<StorageTokenRecord>>>(
      "listing storage tokens", [&]() -> Result<std::vector<StorageTokenRecord>> {
        SQLite::Statement q(
            db_, std::string(kTokenSelect) + " FROM storage_tokens WHERE org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        std::vector<StorageTokenRecord> out;
        while (q.executeStep()) out.push_back(ReadToken(q));
        return out;
      });
}

Status SqliteStore::RevokeStorageToken(const std::string& org_id, const std::string& id,
                                       int64_t now) {
  return Guard("revoking storage token", [&]() -> Status {
    SQLite::Statement q(db_,
                        "UPDATE storage_tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ? "
                        "ELSE revoked_at END WHERE id = ? AND org_id = ?");
    q.bind(1, now);
    q.bind(2, id);
    q.bind(3, org_id);
    if (q.exec() == 0) return NotFound("storage token " + id + " not found");
    return Status::Ok();
  });
}

Status SqliteStore::PutSite(const SiteRecord& s, const SiteReleaseRecord* release) {
  return Guard("saving site", [&]() -> Status {
    StoreTransaction tx(db_);
    if (release) InsertSiteRelease(db_, *release);
    UpsertSite(db_, s);
    tx.commit();
    return Status::Ok();
  });
}

Result<std::vector<std::string>> SqliteStore::PublishSite(const SiteRecord& s,
                                                          const SiteReleaseRecord& release,
                                                          const SitePublishLimits& limits) {
  return Guard<Result<std::vector<std::string>>>(
      "publishing site", [&]() -> Result<std::vector<std::string>> {
        StoreTransaction tx(db_);
        SQLite::Statement known(db_, "SELECT 1 FROM sites WHERE id = ?");
        known.bind(1, s.id);
        if (!known.executeStep() && limits.max_sites > 0) {
          SQLite::Statement c(db_, "SELECT COUNT(*) FROM sites WHERE org_id = ?");
          c.bind(1, s.org_id);
          const int64_t sites = c.executeStep() ? c.getColumn(0).getInt64() : 0;
          if (sites >= static_cast<int64_t>(limits.max_sites))
            return Status(Code::kResourceExhausted,
                          "the organization has " + std::to_string(sites) +
                              " sites, the most it may have; delete one to publish another");
        }
        InsertSiteRelease(db_, release);
        UpsertSite(db_, s);
        std::vector<std::string> blobs;
        if (limits.max_releases > 0) {
          // The live release stays; of the others, the newest max_releases - 1 (rowid order is
          // insertion order: ids are random).
          SQLite::Statement d(db_,
                              "DELETE FROM site_releases WHERE site_id = ?1 AND id <> ?2 AND "
                              "rowid NOT IN (SELECT rowid FROM site_releases WHERE site_id = ?1 "
                              "AND id <> ?2 ORDER BY rowid DESC LIMIT ?3) RETURNING files");
          d.bind(1, s.id);
          d.bind(2, s.release_id);
          d.bind(3, static_cast<int64_t>(limits.max_releases - 1));
          while (d.executeStep()) BlobsOf(d.getColumn(0).getString(), blobs);
        }
        if (limits.quota_bytes > 0) {
          const uint64_t used = StoredBytes(db_, s.org_id);
          if (used > limits.quota_bytes) return ObjectQuotaExceeded(used, limits.quota_bytes);
        }
        tx.commit();
        return blobs;
      });
}

Result<SiteRecord> SqliteStore::GetSite(const std::string& org_id, const std::string& id) {
  return Guard<Result<SiteRecord>>("reading site", [&]() -> Result<SiteRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kSiteColumns +
                                 " FROM sites WHERE org_id = ? AND (id = ? OR name = ?)");
    q.bind(1, org_id);
    q.bind(2, id);
    q.bind(3, id);
    if (!q.executeStep()) return NotFound("site " + id + " not found");
    return ReadSite(q);
  });
}

Result<SiteRecord> SqliteStore::FindSiteByHostname(const std::string& hostname) {
  return Guard<Result<SiteRecord>>("reading site", [&]() -> Result<SiteRecord> {
    SQLite::Statement q(db_,
                        std::string("SELECT ") + kSiteColumns + " FROM sites WHERE hostname = ?");
    q.bind(1, hostname);
    if (!q.executeStep()) return NotFound("no site has the hostname " + hostname);
    return ReadSite(q);
  });
}

Result<std::vector<SiteRecord>> SqliteStore::ListSites(const std::string& org_id) {
  return Guard<Result<std::vector<SiteRecord>>>(
      "listing sites", [&]() -> Result<std::vector<SiteRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kSiteColumns +
                                     ", seq FROM sites WHERE org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        std::vector<SiteRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadSite(q));
          out.back().seq = q.getColumn(6).getInt64();
        }
        return out;
      });
}

Result<SiteReleaseRecord> SqliteStore::GetSiteRelease(const std::string& id) {
  return Guard<Result<SiteReleaseRecord>>(
      "reading site release", [&]() -> Result<SiteReleaseRecord> {
        SQLite::Statement q(db_,
                            "SELECT id, site_id, org_id, source_prefix, files, created_at, rowid "
                            "FROM site_releases WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep()) return NotFound("site release " + id + " not found");
        SiteReleaseRecord r;
        r.id = q.getColumn(0).getString();
        r.site_id = q.getColumn(1).getString();
        r.org_id = q.getColumn(2).getString();
        r.source_prefix = q.getColumn(3).getString();
        r.files = DecodeSiteFiles(q.getColumn(4).getString());
        r.created_at = q.getColumn(5).getInt64();
        r.seq = q.getColumn(6).getInt64();
        return r;
      });
}

Result<std::vector<std::string>> SqliteStore::DeleteSite(const std::string& org_id,
                                                         const std::string& id) {
  return Guard<Result<std::vector<std::string>>>(
      "deleting site", [&]() -> Result<std::vector<std::string>> {
        StoreTransaction tx(db_);
        SQLite::Statement q(db_, "DELETE FROM sites WHERE org_id = ? AND id = ?");
        q.bind(1, org_id);
        q.bind(2, id);
        if (q.exec() == 0) return NotFound("site " + id + " not found");
        std::vector<std::string> blobs;
        SQLite::Statement r(db_, "DELETE FROM site_releases WHERE site_id = ? RETURNING files");
        r.bind(1, id);
        while (r.executeStep()) BlobsOf(r.getColumn(0).getString(), blobs);
        tx.commit();
        return blobs;
      });
}

Status SqliteStore::SetSandboxEnv(const std::string& org_id, const std::string& id,
                                  const std::map<std::string, std::string>& vars) {
  return Guard("setting sandbox environment", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement cur(db_, "SELECT env FROM sandboxes WHERE id = ? AND org_id = ?");
    cur.bind(1, id);
    cur.bind(2, org_id);
    if (!cur.executeStep()) return NotFound("sandbox " + id + " not found");
    ASSIGN_OR_RETURN(EnvMap env,
                     DecodeEnvColumn(sealer_, org_id, id, cur.getColumn(0).getString()));
    for (const auto& [k, v] : vars) env[k] = v;
    ASSIGN_OR_RETURN(std::string column, EncodeEnvColumn(sealer_, org_id, id, env));
    SQLite::Statement q(db_, "UPDATE sandboxes SET env = ?, env_names = ? WHERE id = ?");
    q.bind(1, column);
    q.bind(2, EnvNamesColumn(env));
    q.bind(3, id);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

}  // namespace adapt::store
