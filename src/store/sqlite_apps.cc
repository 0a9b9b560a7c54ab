// SqliteStore: deployed apps, their releases and replicas (issue 20). A release's env is
// sealed as a sandbox's is (sandbox_env_column.h).
#include <algorithm>

#include "store/object_quota.h"
#include "store/sandbox_env_column.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kAppColumns =
    "id, org_id, name, hostname, source_sandbox_id, release_id, replicas, created_at, updated_at";
constexpr const char* kReleaseColumns =
    "id, app_id, org_id, blob, sha256, size, source_path, build_command, build_path, "
    "build_exit_code, build_output, start_command, port, env, created_at, readiness_path, "
    "readiness_timeout_seconds, secrets, readiness_period_seconds, readiness_failure_threshold";
constexpr const char* kReplicaColumns =
    "sandbox_id, app_id, org_id, release_id, state, created_at, check_failures, check_failure";
constexpr const char* kTroubleColumns =
    "app_id, org_id, failures, retry_at, why, replica_sandbox_id, replica_release_id";

AppRecord ReadApp(SQLite::Statement& q) {
  AppRecord a;
  a.id = q.getColumn(0).getString();
  a.org_id = q.getColumn(1).getString();
  a.name = q.getColumn(2).getString();
  a.hostname = q.getColumn(3).getString();
  a.source_sandbox_id = q.getColumn(4).getString();
  a.release_id = q.getColumn(5).getString();
  a.replicas = q.getColumn(6).getInt();
  a.created_at = q.getColumn(7).getInt64();
  a.updated_at = q.getColumn(8).getInt64();
  return a;
}

AppReplicaRecord ReadReplica(SQLite::Statement& q) {
  AppReplicaRecord r;
  r.sandbox_id = q.getColumn(0).getString();
  r.app_id = q.getColumn(1).getString();
  r.org_id = q.getColumn(2).getString();
  r.release_id = q.getColumn(3).getString();
  r.state = q.getColumn(4).getString();
  r.created_at = q.getColumn(5).getInt64();
  r.check_failures = q.getColumn(6).getInt();
  r.check_failure = q.getColumn(7).getString();
  return r;
}

AppTroubleRecord ReadTrouble(SQLite::Statement& q) {
  AppTroubleRecord t;
  t.app_id = q.getColumn(0).getString();
  t.org_id = q.getColumn(1).getString();
  t.failures = q.getColumn(2).getInt();
  t.retry_at = q.getColumn(3).getInt64();
  t.why = q.getColumn(4).getString();
  t.replica_sandbox_id = q.getColumn(5).getString();
  t.replica_release_id = q.getColumn(6).getString();
  return t;
}

}  // namespace

AppReleaseRecord SqliteStore::ReadAppRelease(SQLite::Statement& q) {
  AppReleaseRecord r;
  r.id = q.getColumn(0).getString();
  r.app_id = q.getColumn(1).getString();
  r.org_id = q.getColumn(2).getString();
  r.blob = q.getColumn(3).getString();
  r.sha256 = q.getColumn(4).getString();
  r.size = static_cast<uint64_t>(q.getColumn(5).getInt64());
  r.source_path = q.getColumn(6).getString();
  r.build_command = q.getColumn(7).getString();
  r.build_path = q.getColumn(8).getString();
  if (!q.getColumn(9).isNull()) r.build_exit_code = q.getColumn(9).getInt();
  r.build_output = q.getColumn(10).getString();
  r.start_command = q.getColumn(11).getString();
  r.port = q.getColumn(12).getInt();
  auto env = DecodeEnvColumn(sealer_, r.org_id, r.id, q.getColumn(13).getString());
  if (!env.ok()) throw std::runtime_error(env.status().message());
  r.env = std::move(*env);
  r.created_at = q.getColumn(14).getInt64();
  r.readiness_path = q.getColumn(15).getString();
  r.readiness_timeout_seconds = q.getColumn(16).getInt();
  // Names only ([A-Za-z_][A-Za-z0-9_]*), so a comma separates them.
  std::string secrets = q.getColumn(17).getString();
  for (size_t at = 0; at < secrets.size();) {
    size_t comma = secrets.find(',', at);
    if (comma == std::string::npos) comma = secrets.size();
    r.secrets.push_back(secrets.substr(at, comma - at));
    at = comma + 1;
  }
  r.readiness_period_seconds = q.getColumn(18).getInt();
  r.readiness_failure_threshold = q.getColumn(19).getInt();
  r.seq = q.getColumn(20).getInt64();
  return r;
}

Status SqliteStore::PutApp(const AppRecord& a) {
  return Guard("saving app", [&]() -> Status {
    SQLite::Statement taken(db_, "SELECT id FROM apps WHERE hostname = ? AND id <> ?");
    taken.bind(1, a.hostname);
    taken.bind(2, a.id);
    if (taken.executeStep()) return Conflict("hostname " + a.hostname + " is taken");
    SQLite::Statement q(db_, std::string("INSERT INTO apps(") + kAppColumns +
                                 ") VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                                 "release_id = excluded.release_id, replicas = "
                                 "excluded.replicas, updated_at = excluded.updated_at");
    q.bind(1, a.id);
    q.bind(2, a.org_id);
    q.bind(3, a.name);
    q.bind(4, a.hostname);
    q.bind(5, a.source_sandbox_id);
    q.bind(6, a.release_id);
    q.bind(7, a.replicas);
    q.bind(8, a.created_at);
    q.bind(9, a.updated_at);
    q.exec();
    return Status::Ok();
  });
}

Result<AppRecord> SqliteStore::GetApp(const std::string& org_id, const std::string& id) {
  return Guard<Result<AppRecord>>("reading app", [&]() -> Result<AppRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kAppColumns +
                                 " FROM apps WHERE id = ? AND (? = '' OR org_id = ?)");
    q.bind(1, id);
    q.bind(2, org_id);
    q.bind(3, org_id);
    if (!q.executeStep()) return NotFound("app " + id + " not found");
    return ReadApp(q);
  });
}

Result<AppRecord> SqliteStore::FindAppByHostname(const std::string& hostname) {
  return Guard<Result<AppRecord>>("reading app", [&]() -> Result<AppRecord> {
    SQLite::Statement q(db_,
                        std::string("SELECT ") + kAppColumns + " FROM apps WHERE hostname = ?");
    q.bind(1, hostname);
    if (!q.executeStep()) return NotFound("no app has hostname " + hostname);
    return ReadApp(q);
  });
}

Result<std::vector<AppRecord>> SqliteStore::ListApps(const std::string& org_id) {
  return Guard<Result<std::vector<AppRecord>>>(
      "listing apps", [&]() -> Result<std::vector<AppRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kAppColumns +
                                     ", seq FROM apps WHERE ? = '' OR org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        q.bind(2, org_id);
        std::vector<AppRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadApp(q));
          out.back().seq = q.getColumn(9).getInt64();
        }
        return out;
      });
}

Result<std::vector<std::string>> SqliteStore::DeleteApp(const std::string& org_id,
                                                        const std::string& id) {
  return Guard<Result<std::vector<std::string>>>(
      "deleting app", [&]() -> Result<std::vector<std::string>> {
        StoreTransaction tx(db_);
        SQLite::Statement d(db_, "DELETE FROM apps WHERE id = ? AND (? = '' OR org_id = ?)");
        d.bind(1, id);
        d.bind(2, org_id);
        d.bind(3, org_id);
        if (d.exec() == 0) return NotFound("app " + id + " not found");
        std::vector<std::string> blobs;
        SQLite::Statement b(db_, "SELECT blob FROM app_releases WHERE app_id = ?");
        b.bind(1, id);
        while (b.executeStep()) blobs.push_back(b.getColumn(0).getString());
        SQLite::Statement r(db_, "DELETE FROM app_releases WHERE app_id = ?");
        r.bind(1, id);
        r.exec();
        SQLite::Statement p(db_, "DELETE FROM app_replicas WHERE app_id = ?");
        p.bind(1, id);
        p.exec();
        SQLite::Statement t(db_, "DELETE FROM app_troubles WHERE app_id = ?");
        t.bind(1, id);
        t.exec();
        tx.commit();
        return blobs;
      });
}

Result<std::vector<std::string>> SqliteStore::DeleteReleasesOfMissingApp(
    const std::string& app_id) {
  return Guard<Result<std::vector<std::string>>>(
      "deleting the releases of a missing app", [&]() -> Result<std::vector<std::string>> {
        StoreTransaction tx(db_);
        std::vector<std::string> blobs;
        SQLite::Statement a(db_, "SELECT 1 FROM apps WHERE id = ?");
        a.bind(1, app_id);
        if (a.executeStep()) return blobs;
        SQLite::Statement b(db_, "SELECT blob FROM app_releases WHERE app_id = ?");
        b.bind(1, app_id);
        while (b.executeStep()) blobs.push_back(b.getColumn(0).getString());
        SQLite::Statement r(db_, "DELETE FROM app_releases WHERE app_id = ?");
        r.bind(1, app_id);
        r.exec();
        tx.commit();
        return blobs;
      });
}

Result<std::vector<std::string>> SqliteStore::PruneAppReleases(const std::string& app_id,
                                                               const std::string& keep_id,
                                                               size_t max_releases) {
  return Guard<Result<std::vector<std::string>>>(
      "pruning app releases", [&]() -> Result<std::vector<std::string>> {
        StoreTransaction tx(db_);
        std::string serving;
        SQLite::Statement a(db_, "SELECT release_id FROM apps WHERE id = ?");
        a.bind(1, app_id);
        if (a.executeStep()) serving = a.getColumn(0).getString();
        int64_t kept = 0;
        SQLite::Statement k(db_,
                            "SELECT COUNT(*) FROM app_releases WHERE app_id = ? AND id IN (?, ?)");
        k.bind(1, app_id);
        k.bind(2, serving);
        k.bind(3, keep_id);
        if (k.executeStep()) kept = k.getColumn(0).getInt64();
        const int64_t others = std::max<int64_t>(0, static_cast<int64_t>(max_releases) - kept);
        SQLite::Statement d(db_,
                            "DELETE FROM app_releases WHERE app_id = ?1 AND id NOT IN (?2, ?3) "
                            "AND seq NOT IN (SELECT seq FROM app_releases WHERE app_id = ?1 AND "
                            "id NOT IN (?2, ?3) ORDER BY seq DESC LIMIT ?4) RETURNING blob");
        d.bind(1, app_id);
        d.bind(2, serving);
        d.bind(3, keep_id);
        d.bind(4, others);
        std::vector<std::string> blobs;
        while (d.executeStep()) blobs.push_back(d.getColumn(0).getString());
        tx.commit();
        return blobs;
      });
}

Status SqliteStore::PutAppRelease(const AppReleaseRecord& r, uint64_t quota_bytes) {
  return Guard("saving app release", [&]() -> Status {
    ASSIGN_OR_RETURN(std::string env, EncodeEnvColumn(sealer_, r.org_id, r.id, r.env));
    StoreTransaction tx(db_);
    SQLite::Statement q(db_, std::string("INSERT INTO app_releases(") + kReleaseColumns +
                                 ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    q.bind(1, r.id);
    q.bind(2, r.app_id);
    q.bind(3, r.org_id);
    q.bind(4, r.blob);
    q.bind(5, r.sha256);
    q.bind(6, static_cast<int64_t>(r.size));
    q.bind(7, r.source_path);
    q.bind(8, r.build_command);
    q.bind(9, r.build_path);
    if (r.build_exit_code) {
      q.bind(10, *r.build_exit_code);
    } else {
      q.bind(10);
    }
    q.bind(11, r.build_output);
    q.bind(12, r.start_command);
    q.bind(13, r.port);
    q.bind(14, env);
    q.bind(15, r.created_at);
    q.bind(16, r.readiness_path);
    q.bind(17, r.readiness_timeout_seconds);
    std::string secrets;
    for (const auto& name : r.secrets) secrets += (secrets.empty() ? "" : ",") + name;
    q.bind(18, secrets);
    q.bind(19, r.readiness_period_seconds);
    q.bind(20, r.readiness_failure_threshold);
    q.exec();
    if (quota_bytes > 0) {
      const uint64_t used = StoredBytes(db_, r.org_id);
      if (used > quota_bytes) return ObjectQuotaExceeded(used, quota_bytes);
    }
    tx.commit();
    return Status::Ok();
  });
}

Result<AppReleaseRecord> SqliteStore::GetAppRelease(const std::string& app_id,
                                                    const std::string& id) {
  return Guard<Result<AppReleaseRecord>>("reading app release", [&]() -> Result<AppReleaseRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kReleaseColumns +
                                 ", seq FROM app_releases WHERE id = ? AND app_id = ?");
    q.bind(1, id);
    q.bind(2, app_id);
    if (!q.executeStep()) return NotFound("release " + id + " not found");
    return ReadAppRelease(q);
  });
}

Result<std::vector<AppReleaseRecord>> SqliteStore::ListAppReleases(const std::string& app_id) {
  return Guard<Result<std::vector<AppReleaseRecord>>>(
      "listing app releases", [&]() -> Result<std::vector<AppReleaseRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kReleaseColumns +
                                     ", seq FROM app_releases WHERE app_id = ? ORDER BY seq DESC");
        q.bind(1, app_id);
        std::vector<AppReleaseRecord> out;
        while (q.executeStep()) out.push_back(ReadAppRelease(q));
        return out;
      });
}

Status SqliteStore::PutAppReplica(const AppReplicaRecord& r) {
  return Guard("saving app replica", [&]() -> Status {
    SQLite::Statement q(db_, std::string("INSERT INTO app_replicas(") + kReplicaColumns +
                                 ") VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(sandbox_id) DO UPDATE SET "
                                 "release_id = excluded.release_id, state = excluded.state, "
                                 "check_failures = excluded.check_failures, "
                                 "check_failure = excluded.check_failure");
    q.bind(1, r.sandbox_id);
    q.bind(2, r.app_id);
    q.bind(3, r.org_id);
    q.bind(4, r.release_id);
    q.bind(5, r.state);
    q.bind(6, r.created_at);
    q.bind(7, r.check_failures);
    q.bind(8, r.check_failure);
    q.exec();
    return Status::Ok();
  });
}

Status SqliteStore::DeleteAppReplica(const std::string& sandbox_id) {
  return Guard("deleting app replica", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM app_replicas WHERE sandbox_id = ?");
    q.bind(1, sandbox_id);
    q.exec();
    return Status::Ok();
  });
}

Result<std::vector<AppReplicaRecord>> SqliteStore::ListAppReplicas(const std::string& app_id) {
  return Guard<Result<std::vector<AppReplicaRecord>>>(
      "listing app replicas", [&]() -> Result<std::vector<AppReplicaRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kReplicaColumns +
                                     " FROM app_replicas WHERE ? = '' OR app_id = ? ORDER BY seq");
        q.bind(1, app_id);
        q.bind(2, app_id);
        std::vector<AppReplicaRecord> out;
        while (q.executeStep()) out.push_back(ReadReplica(q));
        return out;
      });
}

Status SqliteStore::PutAppTrouble(const AppTroubleRecord& t) {
  return Guard("saving app trouble", [&]() -> Status {
    SQLite::Statement q(db_, std::string("INSERT OR REPLACE INTO app_troubles(") + kTroubleColumns +
                                 ") VALUES (?,?,?,?,?,?,?)");
    q.bind(1, t.app_id);
    q.bind(2, t.org_id);
    q.bind(3, t.failures);
    q.bind(4, t.retry_at);
    q.bind(5, t.why);
    q.bind(6, t.replica_sandbox_id);
    q.bind(7, t.replica_release_id);
    q.exec();
    return Status::Ok();
  });
}

Status SqliteStore::DeleteAppTrouble(const std::string& app_id) {
  return Guard("deleting app trouble", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM app_troubles WHERE app_id = ?");
    q.bind(1, app_id);
    q.exec();
    return Status::Ok();
  });
}

Result<std::vector<AppTroubleRecord>> SqliteStore::ListAppTroubles() {
  return Guard<Result<std::vector<AppTroubleRecord>>>(
      "listing app troubles", [&]() -> Result<std::vector<AppTroubleRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kTroubleColumns + " FROM app_troubles");
        std::vector<AppTroubleRecord> out;
        while (q.executeStep()) out.push_back(ReadTrouble(q));
        return out;
      });
}

}  // namespace adapt::store
