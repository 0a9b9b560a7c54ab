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

// A publish under an Idempotency-Key writes its site with the key (IdempotencyStore::CreateOnce).
class SiteStore : public virtual IdempotencyStore {
 public:
  virtual ~SiteStore() = default;

  // Static sites: Put inserts or replaces the site; releases are only ever inserted.
  virtual Status PutSite(const SiteRecord& site, const SiteReleaseRecord* new_release) = 0;
  virtual Result<SiteRecord> GetSite(const std::string& org_id, const std::string& id) = 0;
  virtual Result<SiteRecord> FindSiteByHostname(const std::string& hostname) = 0;
  virtual Result<std::vector<SiteRecord>> ListSites(const std::string& org_id) = 0;
  virtual Result<SiteReleaseRecord> GetSiteRelease(const std::string& id) = 0;
  // Deletes the site and its releases; returns the blobs they held.
  virtual Result<std::vector<std::string>> DeleteSite(const std::string& org_id,
                                                      const std::string& id) = 0;
};

}  // namespace adapt::store
