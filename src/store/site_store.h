// SiteStore: static sites and their releases. One domain of Store (store/store.h): a service that
// needs only this domain depends on this interface, and a test can give it a MemoryStore. Every
// method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/idempotency_store.h"
#include "store/records.h"

namespace adapt::store {

// What PublishSite enforces, in its transaction.
struct SitePublishLimits {
  // The most bytes the organization's object storage may hold once the release is in and the
  // old ones pruned (ObjectRecordStore::ObjectBytes); 0: no limit.
  uint64_t quota_bytes = 0;
  size_t max_releases = 10;  // per site: the live one and the newest others
  size_t max_sites = 100;    // per organization, checked when the publish makes a site
};

// A publish under an Idempotency-Key writes its site with the key (IdempotencyStore::CreateOnce).
class SiteStore : public virtual IdempotencyStore {
 public:
  virtual ~SiteStore() = default;

  // Static sites: Put inserts or replaces the site; releases are only ever inserted.
  virtual Status PutSite(const SiteRecord& site, const SiteReleaseRecord* new_release) = 0;
  // PutSite with `release` made live, in one transaction that also deletes the site's releases
  // past `limits.max_releases` (the oldest that are not live) and refuses, changing nothing,
  // a new site past `limits.max_sites` or a release past `limits.quota_bytes`
  // (kResourceExhausted). Returns the blobs of the deleted releases, for the caller to free
  // once the rows are gone.
  virtual Result<std::vector<std::string>> PublishSite(const SiteRecord& site,
                                                       const SiteReleaseRecord& release,
                                                       const SitePublishLimits& limits) = 0;
  virtual Result<SiteRecord> GetSite(const std::string& org_id, const std::string& id) = 0;
  virtual Result<SiteRecord> FindSiteByHostname(const std::string& hostname) = 0;
  virtual Result<std::vector<SiteRecord>> ListSites(const std::string& org_id) = 0;
  virtual Result<SiteReleaseRecord> GetSiteRelease(const std::string& id) = 0;
  // Deletes the site and its releases; returns the blobs they held.
  virtual Result<std::vector<std::string>> DeleteSite(const std::string& org_id,
                                                      const std::string& id) = 0;
};

}  // namespace adapt::store
