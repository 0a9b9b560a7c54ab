// SecretStore: organization secrets. One domain of Store (store/store.h): a service that needs only
// this domain depends on this interface, and a test can give it a MemoryStore. Every method is one
// transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/idempotency_store.h"
#include "store/records.h"

namespace adapt::store {

// Its creates take an Idempotency-Key: the idempotency table is reachable from it.
class SecretStore : public virtual IdempotencyStore {
 public:
  virtual ~SecretStore() = default;

  // Organization secrets. PutSecret creates the secret at version 1 or replaces its value
  // with the next version, in one transaction, and returns what is stored now (`version`,
  // `created_at` of the argument are ignored).
  virtual Result<SecretRecord> PutSecret(const SecretRecord& secret) = 0;
  // NotFound unless the organization has a secret of this name.
  virtual Result<SecretRecord> GetSecret(const std::string& org_id, const std::string& name) = 0;
  // In creation order, each with its seq (a new value keeps it).
  virtual Result<std::vector<SecretRecord>> ListSecrets(const std::string& org_id) = 0;
  virtual Status DeleteSecret(const std::string& org_id, const std::string& name) = 0;
};

}  // namespace adapt::store
