// DatabaseStore: each organization's PostgreSQL database (issue 19). One row per organization;
// the owner role's password is kept sealed (core/secret_cipher.h), never in plain text.
// Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::store {

struct DatabaseRecord {
  std::string org_id;
  std::string name;             // the database's and its owner role's name
  std::string status;           // provisioning, ready, over_quota
  std::string sealed_password;  // the owner role's password, sealed under the org's key
  int64_t created_at = 0;       // ms since the epoch
  int64_t updated_at = 0;
};

class DatabaseStore {
 public:
  virtual ~DatabaseStore() = default;

  // Inserts or replaces the organization's row (by org_id); created_at is kept from the
  // first insert.
  virtual Status PutDatabase(const DatabaseRecord& record) = 0;
  // NotFound when the organization has no database yet.
  virtual Result<DatabaseRecord> GetDatabase(const std::string& org_id) = 0;
  // Every organization's, by org_id (the quota check's rounds).
  virtual Result<std::vector<DatabaseRecord>> ListDatabases() = 0;
  // Removes the organization's row; NotFound when there is none.
  virtual Status DeleteDatabase(const std::string& org_id) = 0;
};

}  // namespace adapt::store
