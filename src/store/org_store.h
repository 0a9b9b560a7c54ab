// OrgStore: organizations and their API keys. One domain of Store (store/store.h): a service that
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

// Its creates take an Idempotency-Key: the idempotency table is reachable from it.
class OrgStore : public virtual IdempotencyStore {
 public:
  virtual ~OrgStore() = default;

  virtual Result<OrgRecord> CreateOrg(const OrgRecord& org) = 0;
  virtual Result<OrgRecord> GetOrg(const std::string& id) = 0;
  virtual Result<OrgRecord> FindOrgByName(const std::string& name) = 0;
  virtual Result<std::vector<OrgRecord>> ListOrgs() = 0;

  // The first step of deleting an organization (core/org_deletion.h), one transaction: refused
  // with Conflict, naming what remains, while it has a sandbox that is not deleted, an app, an
  // automation or a job that has not ended (the admin organization always); otherwise its
  // keys, OAuth grants, users, dashboard sessions and storage tokens go, so that nothing
  // authenticates as it from then on, and it is marked deleting at `now` (kept when it already
  // was). A sandbox create for a deleting organization is refused.
  virtual Status CloseOrg(const std::string& org_id, int64_t now) = 0;
  // The last step, once its files are gone: every row of the organization, then the
  // organization. Conflict while it has a sandbox that is not deleted; NotFound when it is
  // not a deleting organization.
  virtual Status PurgeOrg(const std::string& org_id) = 0;

  virtual Status CreateApiKey(const ApiKeyRecord& key) = 0;
  // NotFound when no key has this hash.
  virtual Result<ApiKeyRecord> FindApiKey(const std::string& key_hash) = 0;
  // The organization's keys, oldest first.
  virtual Result<std::vector<ApiKeyRecord>> ListApiKeys(const std::string& org_id) = 0;
  // Deletes the key and, in the same transaction, every OAuth grant made with it, so no token
  // outlives the key it was issued for. NotFound when the org has no such key.
  virtual Status DeleteApiKey(const std::string& org_id, const std::string& key_id) = 0;
};

}  // namespace adapt::store
