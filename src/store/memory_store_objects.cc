// MemoryStore: objects, storage tokens and static sites (their releases' blobs included).
#include <algorithm>

#include "store/memory_store.h"
#include "store/memory_store_find.h"
#include "store/object_quota.h"

namespace adapt::store {
namespace {

void BlobsOf(const std::map<std::string, SiteFileRecord>& files, std::vector<std::string>& out) {
  for (const auto& [_, f] : files)
    if (!f.blob.empty()) out.push_back(f.blob);
}

}  // namespace

Result<std::string> MemoryStore::PutObject(const ObjectRecord& o) {
  return PutObjectWithinQuota(o, 0);
}

Result<std::string> MemoryStore::PutObjectWithinQuota(const ObjectRecord& o, uint64_t quota_bytes) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  RETURN_IF_ERROR(RefuseIfOrgDeletingLocked(o.org_id));
  std::string old;
  uint64_t old_size = 0;
  auto it = objects_.find({o.org_id, o.key});
  if (it != objects_.end()) {
    old = it->second.blob;
    old_size = it->second.size;
  }
  if (quota_bytes > 0) {
    uint64_t used = 0;
    for (const auto& [k, stored] : objects_)
      if (k.first == o.org_id) used += stored.size;
    // Replacing an object frees its old bytes.
    if (used - old_size + o.size > quota_bytes)
      return ObjectQuotaExceeded(used - old_size + o.size, quota_bytes);
  }
  objects_[{o.org_id, o.key}] = o;
  return old;
}

Result<ObjectRecord> MemoryStore::GetObject(const std::string& org_id, const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = objects_.find({org_id, key});
  if (it == objects_.end()) return NotFound("object " + key + " not found");
  return it->second;
}

Result<std::vector<ObjectRecord>> MemoryStore::ListObjects(const std::string& org_id,
                                                           const std::string& prefix,
                                                           const std::string& after, size_t limit) {
  std::lock_guard lock(mu_);
  std::vector<ObjectRecord> out;
  // The map orders (org, key) pairs with std::string's byte order, as SQLite's BINARY does.
  auto it = after < prefix ? objects_.lower_bound({org_id, prefix})
                           : objects_.upper_bound({org_id, after});
  for (; it != objects_.end() && it->first.first == org_id &&
         it->first.second.compare(0, prefix.size(), prefix) == 0 && out.size() < limit;
       ++it)
    out.push_back(it->second);
  return out;
}

Result<std::string> MemoryStore::DeleteObject(const std::string& org_id, const std::string& key) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = objects_.find({org_id, key});
  if (it == objects_.end()) return NotFound("object " + key + " not found");
  std::string blob = it->second.blob;
  objects_.erase(it);
  return blob;
}

Result<std::vector<std::string>> MemoryStore::ListReferencedBlobs() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [_, o] : objects_) out.push_back(o.blob);
  for (const auto& [_, r] : releases_) BlobsOf(r.files, out);
  for (const auto& r : app_releases_) out.push_back(r.blob);
  return out;
}

Result<uint64_t> MemoryStore::ObjectBytes(const std::string& org_id) {
  std::lock_guard lock(mu_);
  uint64_t used = 0;
  for (const auto& [k, o] : objects_)
    if (k.first == org_id) used += o.size;
  for (const auto& [_, r] : releases_)
    if (r.org_id == org_id)
      for (const auto& [_, f] : r.files) used += f.size;
  for (const auto& r : app_releases_)
    if (r.org_id == org_id) used += r.size;
  return used;
}

Status MemoryStore::PutStorageToken(const StorageTokenRecord& t) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (FindIf(tokens_, [&](const auto& o) { return o.id == t.id; }))
    return Internal("saving storage token: id " + t.id + " is taken");
  tokens_.push_back(t);
  tokens_.back().seq = next_seq_++;
  return Status::Ok();
}

Result<StorageTokenRecord> MemoryStore::GetStorageToken(const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto* t = FindIf(tokens_, [&](const auto& t) { return t.id == id; })) return *t;
  return NotFound("storage token " + id + " not found");
}

Result<std::vector<StorageTokenRecord>> MemoryStore::ListStorageTokens(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<StorageTokenRecord> out;
  for (const auto& t : tokens_)
    if (t.org_id == org_id) out.push_back(t);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

Status MemoryStore::RevokeStorageToken(const std::string& org_id, const std::string& id,
                                       int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto* t = FindIf(tokens_, [&](const auto& t) { return t.id == id && t.org_id == org_id; });
  if (!t) return NotFound("storage token " + id + " not found");
  if (t->revoked_at == 0) t->revoked_at = now;
  return Status::Ok();
}

Status MemoryStore::PutSite(const SiteRecord& s, const SiteReleaseRecord* release) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto* stored = FindIf(sites_, [&](const auto& o) { return o.id == s.id; });
  if (!stored && FindIf(sites_, [&](const auto& o) {
        return o.hostname == s.hostname || (o.org_id == s.org_id && o.name == s.name);
      }))
    return Internal("saving site: " + s.name + " or " + s.hostname + " is taken");
  if (release) {
    if (releases_.count(release->id))
      return Internal("saving site: release " + release->id + " exists");
    releases_[release->id] = *release;
    releases_[release->id].seq = next_seq_++;
  }
  if (stored) {
    stored->release_id = s.release_id;
  } else {
    sites_.push_back(s);
    sites_.back().seq = next_seq_++;
  }
  return Status::Ok();
}

Result<std::vector<std::string>> MemoryStore::PublishSite(const SiteRecord& s,
                                                          const SiteReleaseRecord& release,
                                                          const SitePublishLimits& limits) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (!FindIf(sites_, [&](const auto& o) { return o.id == s.id; }) && limits.max_sites > 0) {
    const auto sites = std::count_if(sites_.begin(), sites_.end(),
                                     [&](const auto& o) { return o.org_id == s.org_id; });
    if (sites >= static_cast<std::ptrdiff_t>(limits.max_sites))
      return Status(Code::kResourceExhausted,
                    "the organization has " + std::to_string(sites) +
                        " sites, the most it may have; delete one to publish another");
  }
  // The live release stays; of the others, the newest max_releases - 1.
  std::vector<const SiteReleaseRecord*> others;
  for (const auto& [id, r] : releases_)
    if (r.site_id == s.id && id != s.release_id) others.push_back(&r);
  std::sort(others.begin(), others.end(),
            [](const auto* a, const auto* b) { return a->seq > b->seq; });
  std::vector<std::string> gone;
  for (size_t i = limits.max_releases > 0 ? limits.max_releases - 1 : others.size();
       i < others.size(); ++i)
    gone.push_back(others[i]->id);
  if (limits.quota_bytes > 0) {
    ASSIGN_OR_RETURN(uint64_t used, ObjectBytes(s.org_id));
    for (const auto& [_, f] : release.files) used += f.size;
    for (const auto& id : gone)
      for (const auto& [_, f] : releases_[id].files) used -= f.size;
    if (used > limits.quota_bytes) return ObjectQuotaExceeded(used, limits.quota_bytes);
  }
  RETURN_IF_ERROR(PutSite(s, &release));
  std::vector<std::string> blobs;
  for (const auto& id : gone) {
    BlobsOf(releases_[id].files, blobs);
    releases_.erase(id);
  }
  return blobs;
}

Result<SiteRecord> MemoryStore::GetSite(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto* s = FindIf(sites_, [&](const auto& s) {
        return s.org_id == org_id && (s.id == id || s.name == id);
      }))
    return *s;
  return NotFound("site " + id + " not found");
}

Result<SiteRecord> MemoryStore::FindSiteByHostname(const std::string& hostname) {
  std::lock_guard lock(mu_);
  if (auto* s = FindIf(sites_, [&](const auto& s) { return s.hostname == hostname; })) return *s;
  return NotFound("no site has the hostname " + hostname);
}

Result<std::vector<SiteRecord>> MemoryStore::ListSites(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<SiteRecord> out;
  for (const auto& s : sites_)
    if (s.org_id == org_id) out.push_back(s);
  return out;
}

Result<SiteReleaseRecord> MemoryStore::GetSiteRelease(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = releases_.find(id);
  if (it == releases_.end()) return NotFound("site release " + id + " not found");
  return it->second;
}

Result<std::vector<std::string>> MemoryStore::DeleteSite(const std::string& org_id,
                                                         const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::erase_if(sites_, [&](const auto& s) { return s.org_id == org_id && s.id == id; }) == 0)
    return NotFound("site " + id + " not found");
  std::vector<std::string> blobs;
  for (auto it = releases_.begin(); it != releases_.end();) {
    if (it->second.site_id == id) {
      BlobsOf(it->second.files, blobs);
      it = releases_.erase(it);
    } else {
      ++it;
    }
  }
  return blobs;
}

}  // namespace adapt::store
