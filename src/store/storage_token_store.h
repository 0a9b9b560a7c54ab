// StorageTokenStore: storage tokens (object storage credentials). One domain of Store
// (store/store.h): a service that needs only this domain depends on this interface, and a test can
// give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/idempotency_store.h"
#include "store/records.h"

namespace adapt::store {

// Its creates take an Idempotency-Key: the idempotency table is reachable from it.
class StorageTokenStore : public virtual IdempotencyStore {
 public:
  virtual ~StorageTokenStore() = default;

  virtual Status PutStorageToken(const StorageTokenRecord& token) = 0;
  virtual Result<StorageTokenRecord> GetStorageToken(const std::string& id) = 0;
  virtual Result<std::vector<StorageTokenRecord>> ListStorageTokens(const std::string& org_id) = 0;
  // NotFound unless the organization has this token.
  virtual Status RevokeStorageToken(const std::string& org_id, const std::string& id,
                                    int64_t now) = 0;
};

}  // namespace adapt::store
