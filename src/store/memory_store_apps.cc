// MemoryStore: deployed apps, with the contract of store/app_store.h.
#include <algorithm>
#include <set>

#include "store/memory_store.h"
#include "store/object_quota.h"

namespace adapt::store {

Status MemoryStore::PutApp(const AppRecord& app) {
  std::lock_guard lock(mu_);
  for (const auto& a : apps_)
    if (a.hostname == app.hostname && a.id != app.id)
      return Conflict("hostname " + app.hostname + " is taken");
  for (auto& a : apps_) {
    if (a.id != app.id) continue;
    a.release_id = app.release_id;
    a.replicas = app.replicas;
    a.updated_at = app.updated_at;
    return Status::Ok();
  }
  apps_.push_back(app);
  apps_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<AppRecord> MemoryStore::GetApp(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& a : apps_)
    if (a.id == id && (org_id.empty() || a.org_id == org_id)) return a;
  return NotFound("app " + id + " not found");
}

Result<AppRecord> MemoryStore::FindAppByHostname(const std::string& hostname) {
  std::lock_guard lock(mu_);
  for (const auto& a : apps_)
    if (a.hostname == hostname) return a;
  return NotFound("no app has hostname " + hostname);
}

Result<std::vector<AppRecord>> MemoryStore::ListApps(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<AppRecord> out;
  for (const auto& a : apps_)
    if (org_id.empty() || a.org_id == org_id) out.push_back(a);
  return out;
}

Result<std::vector<std::string>> MemoryStore::DeleteApp(const std::string& org_id,
                                                        const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(apps_.begin(), apps_.end(), [&](const AppRecord& a) {
    return a.id == id && (org_id.empty() || a.org_id == org_id);
  });
  if (it == apps_.end()) return NotFound("app " + id + " not found");
  apps_.erase(it);
  std::vector<std::string> blobs;
  for (const auto& r : app_releases_)
    if (r.app_id == id) blobs.push_back(r.blob);
  std::erase_if(app_releases_, [&](const AppReleaseRecord& r) { return r.app_id == id; });
  std::erase_if(app_replicas_, [&](const AppReplicaRecord& r) { return r.app_id == id; });
  std::erase_if(app_troubles_, [&](const AppTroubleRecord& t) { return t.app_id == id; });
  return blobs;
}

Result<std::vector<std::string>> MemoryStore::DeleteReleasesOfMissingApp(
    const std::string& app_id) {
  std::lock_guard lock(mu_);
  std::vector<std::string> blobs;
  if (std::any_of(apps_.begin(), apps_.end(), [&](const AppRecord& a) { return a.id == app_id; }))
    return blobs;
  for (const auto& r : app_releases_)
    if (r.app_id == app_id) blobs.push_back(r.blob);
  std::erase_if(app_releases_, [&](const AppReleaseRecord& r) { return r.app_id == app_id; });
  return blobs;
}

Result<std::vector<std::string>> MemoryStore::PruneAppReleases(const std::string& app_id,
                                                               const std::string& keep_id,
                                                               size_t max_releases) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::string serving;
  for (const auto& a : apps_)
    if (a.id == app_id) serving = a.release_id;
  // Newest first: the kept ones, then those that go.
  size_t kept = 0;
  std::set<std::string> gone;
  for (auto it = app_releases_.rbegin(); it != app_releases_.rend(); ++it) {
    if (it->app_id != app_id) continue;
    if (it->id == serving || it->id == keep_id) ++kept;
  }
  for (auto it = app_releases_.rbegin(); it != app_releases_.rend(); ++it) {
    if (it->app_id != app_id || it->id == serving || it->id == keep_id) continue;
    if (kept < max_releases) {
      ++kept;
    } else {
      gone.insert(it->id);
    }
  }
  std::vector<std::string> blobs;
  for (const auto& r : app_releases_)
    if (r.app_id == app_id && gone.count(r.id)) blobs.push_back(r.blob);
  std::erase_if(app_releases_,
                [&](const AppReleaseRecord& r) { return r.app_id == app_id && gone.count(r.id); });
  return blobs;
}

Status MemoryStore::PutAppRelease(const AppReleaseRecord& release, uint64_t quota_bytes) {
  std::lock_guard lock(mu_);
  for (const auto& r : app_releases_)
    if (r.id == release.id) return Conflict("release " + release.id + " exists");
  if (quota_bytes > 0) {
    ASSIGN_OR_RETURN(uint64_t used, ObjectBytes(release.org_id));
    if (used + release.size > quota_bytes)
      return ObjectQuotaExceeded(used + release.size, quota_bytes);
  }
  app_releases_.push_back(release);
  app_releases_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<AppReleaseRecord> MemoryStore::GetAppRelease(const std::string& app_id,
                                                    const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& r : app_releases_)
    if (r.id == id && r.app_id == app_id) return r;
  return NotFound("release " + id + " not found");
}

Result<std::vector<AppReleaseRecord>> MemoryStore::ListAppReleases(const std::string& app_id) {
  std::lock_guard lock(mu_);
  std::vector<AppReleaseRecord> out;
  for (auto it = app_releases_.rbegin(); it != app_releases_.rend(); ++it)
    if (it->app_id == app_id) out.push_back(*it);
  return out;
}

Status MemoryStore::PutAppReplica(const AppReplicaRecord& replica) {
  std::lock_guard lock(mu_);
  for (auto& r : app_replicas_) {
    if (r.sandbox_id != replica.sandbox_id) continue;
    r.release_id = replica.release_id;
    r.state = replica.state;
    r.check_failures = replica.check_failures;
    r.check_failure = replica.check_failure;
    return Status::Ok();
  }
  app_replicas_.push_back(replica);
  return Status::Ok();
}

Status MemoryStore::DeleteAppReplica(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  std::erase_if(app_replicas_,
                [&](const AppReplicaRecord& r) { return r.sandbox_id == sandbox_id; });
  return Status::Ok();
}

Result<std::vector<AppReplicaRecord>> MemoryStore::ListAppReplicas(const std::string& app_id) {
  std::lock_guard lock(mu_);
  std::vector<AppReplicaRecord> out;
  for (const auto& r : app_replicas_)
    if (app_id.empty() || r.app_id == app_id) out.push_back(r);
  return out;
}

Status MemoryStore::PutAppTrouble(const AppTroubleRecord& trouble) {
  std::lock_guard lock(mu_);
  for (auto& t : app_troubles_) {
    if (t.app_id != trouble.app_id) continue;
    t = trouble;
    return Status::Ok();
  }
  app_troubles_.push_back(trouble);
  return Status::Ok();
}

Status MemoryStore::DeleteAppTrouble(const std::string& app_id) {
  std::lock_guard lock(mu_);
  std::erase_if(app_troubles_, [&](const AppTroubleRecord& t) { return t.app_id == app_id; });
  return Status::Ok();
}

Result<std::vector<AppTroubleRecord>> MemoryStore::ListAppTroubles() {
  std::lock_guard lock(mu_);
  return app_troubles_;
}

}  // namespace adapt::store
