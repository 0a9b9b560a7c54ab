// DatabaseService: each organization's PostgreSQL database (issue 19) on adaptd's server
// (database::DatabaseServer: the cluster adaptd runs itself, or an operator's external one). One
// database and one owner role per organization, both named DatabaseName(org_id), made on first use:
// the role is NOSUPERUSER NOCREATEDB NOCREATEROLE with a connection limit, binding temp_file_limit
// and default statement and idle-in- transaction timeouts; CONNECT on the database is revoked from
// PUBLIC. The role's password is random, kept sealed in the store (core/secret_cipher.h) and handed
// only to the organization's sandboxes that ask for the database (Credentials); no view carries it,
// nor the server's host. The one verb behind GET /v1/database, get_user_database and `adapt db
// status`. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/status.h"
#include "core/auth.h"
#include "database/database_server.h"
#include "storage/object_store.h"
#include "store/database_store.h"

namespace adapt::core {

// One organization's; the plan's databaseMiB and databaseConnections replace the first two.
struct DatabaseLimits {
  int64_t quota_bytes = 1024LL * 1024 * 1024;
  int64_t connection_limit = 20;
  int64_t statement_timeout_ms = 60'000;             // a default: a session may SET it
  int64_t idle_in_transaction_timeout_ms = 300'000;  // a default: a session may SET it
  int64_t temp_file_limit_kib = 1024 * 1024;         // binding: superuser-only setting
};

// What an organization may see of its database: no host, no password.
struct DatabaseView {
  std::string status;   // not_created, provisioning, ready, over_quota, unavailable
  std::string version;  // the server's version ("15.8"); empty when unknown
  int64_t size_bytes = 0;
  int64_t quota_bytes = 0;
  int64_t connections = 0;
  int64_t connection_limit = 0;
  int64_t created_at = 0;  // ms since the epoch; 0: not created
};

// What a sandbox of the organization gets (its environment, redacted from its output).
struct DatabaseCredentials {
  std::string name;  // database and role
  std::string password;
  uint16_t port = 0;  // the proxy's port at the sandbox's gateway
};

// A pg_dump archive written into the organization's object storage.
struct DatabaseDump {
  std::string bucket;  // "objects": the organization's namespace (the storage gateway's name)
  std::string key;     // database-dumps/<UTC time>.dump
  int64_t size_bytes = 0;
  std::string sha256;
  int64_t created_at = 0;  // ms since the epoch
};

// "adapt_" + the organization's id (ids are [a-z0-9_]), a valid unquoted PostgreSQL name.
std::string DatabaseName(const std::string& org_id);

class DatabaseService {
 public:
  // `server`: null where adaptd has no PostgreSQL (every status is then unavailable).
  // `master_key`: adaptd's master key (storage::LoadMasterKey), which seals the passwords.
  DatabaseService(store::DatabaseStore& store, database::DatabaseServer* server,
                  std::string master_key, DatabaseLimits limits = {});
  ~DatabaseService();  // stops the quota checks

  // The organization's database as it is now; not_created until Create or first use.
  Result<DatabaseView> Describe(const Principal& who);
  // Makes the organization's database (idempotent: a made one is described).
  Result<DatabaseView> Create(const Principal& who);
  // At start-up, before the API answers: finishes every database a crash left provisioning
  // (the server is started for them), so that none waits for its organization's next call.
  // One that cannot be finished now (no server) stays provisioning and is logged; the next
  // call or start-up tries again.
  void Reconcile();
  // The database's credentials for one of the organization's sandboxes, made on first use.
  Result<DatabaseCredentials> Credentials(const std::string& org_id);
  // A new password (sessions already open keep going); sandboxes created later get it.
  Result<DatabaseView> RotatePassword(const Principal& who);
  // Writes a pg_dump custom-format archive of the organization's database into its object
  // storage (NotFound when it has no database; the object quota applies).
  Result<DatabaseDump> Dump(const Principal& who);
  // Drops the organization's database and role (its sandboxes' sessions end, their credentials
  // stop working); `confirm` must be the organization's id. A later create makes a new, empty
  // one with a new password.
  Status Delete(const Principal& who, const std::string& confirm);
  // The proxy's port sandboxes reach at their gateway (set once it listens).
  void SetProxyPort(uint16_t port) { proxy_port_ = port; }
  // The organization's limits (its plan's); unset: the defaults given at construction.
  void set_limits(std::function<DatabaseLimits(const std::string& org_id)> limits) {
    std::lock_guard lock(limits_mu_);
    limits_of_ = std::move(limits);
  }
  // Where dumps go; unset: Dump is unavailable.
  void set_object_store(storage::ObjectStore* objects) { objects_ = objects; }
  // Checks every database's size against its quota now and then every `interval`, making a
  // database over quota read-only and one back under it writable (database_quota.cc).
  void StartQuotaChecks(std::chrono::milliseconds interval);
  void StopQuotaChecks();
  // One check of one organization's database (also run by Describe, so on demand): its size,
  // its status (ready or over_quota) and its role's connection limit brought in line.
  // REQUIRES: mu_ not held.
  Result<store::DatabaseRecord> CheckQuota(const std::string& org_id);

  const DatabaseLimits& defaults() const { return limits_; }
  // The organization's limits now (its plan's, else the defaults).
  DatabaseLimits LimitsOf(const std::string& org_id) const;

 private:
  Result<store::DatabaseRecord> CheckQuotaLocked(store::DatabaseRecord record, int64_t* size_bytes);
  void QuotaLoop(std::chrono::milliseconds interval);

  Result<store::DatabaseRecord> Ensure(const std::string& org_id);
  Status Provision(const store::DatabaseRecord& record, const std::string& password);
  Result<std::string> OpenPassword(const store::DatabaseRecord& record);
  Result<store::DatabaseRecord> SetPassword(store::DatabaseRecord record);
  DatabaseView Unavailable(const std::string& org_id,
                           const std::optional<store::DatabaseRecord>& record) const;

  store::DatabaseStore& store_;
  database::DatabaseServer* server_;
  const std::string master_key_;
  const DatabaseLimits limits_;
  uint16_t proxy_port_ = 0;
  // The database proxy's thread asks LimitsOf while the daemon may still be setting it.
  mutable std::mutex limits_mu_;
  std::function<DatabaseLimits(const std::string&)> limits_of_;
  storage::ObjectStore* objects_ = nullptr;
  std::mutex mu_;  // one provisioning, quota change or deletion at a time
  std::mutex quota_mu_;
  std::condition_variable quota_wake_;
  bool quota_stopping_ = false;
  std::thread quota_thread_;
};

}  // namespace adapt::core
