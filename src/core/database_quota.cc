// DatabaseService's size quota (issue 19): PostgreSQL has no per-database size limit, so adaptd
// measures each database (pg_database_size) on a timer and on demand, and while one is over its
// plan's quota its role may only read (database/write_freeze.h); back under it, writes again.
// Between two checks a tenant can write past the quota by what it writes in that time.
#include "base/background_work.h"
#include "base/log.h"
#include "base/time.h"
#include "core/database_service.h"
#include "database/admin_session.h"
#include "database/pg_session.h"
#include "database/write_freeze.h"

namespace adapt::core {

Result<store::DatabaseRecord> DatabaseService::CheckQuotaLocked(store::DatabaseRecord r,
                                                                int64_t* size_bytes) {
  if (!server_) return Status(Code::kUnavailable, "this adaptd has no PostgreSQL server");
  RETURN_IF_ERROR(server_->Start());
  ASSIGN_OR_RETURN(auto pg, database::OpenAdminSession(*server_));
  ASSIGN_OR_RETURN(auto size, pg->QueryValue("SELECT pg_database_size($1)", {r.name}));
  if (!size) return NotFound("database " + r.name + " is missing from the server");
  *size_bytes = std::stoll(*size);
  const DatabaseLimits limits = LimitsOf(r.org_id);
  ASSIGN_OR_RETURN(
      auto connection_limit,
      pg->QueryValue("SELECT rolconnlimit FROM pg_roles WHERE rolname = $1", {r.name}));
  if (connection_limit && std::stoll(*connection_limit) != limits.connection_limit)
    RETURN_IF_ERROR(pg->Execute("ALTER ROLE " + pg->QuoteIdentifier(r.name) + " CONNECTION LIMIT " +
                                std::to_string(limits.connection_limit)));
  const std::string wanted = *size_bytes > limits.quota_bytes ? "over_quota" : "ready";
  if (wanted == r.status) return r;
  ASSIGN_OR_RETURN(auto tenant_db, database::OpenAdminSession(*server_, r.name));
  if (wanted == "over_quota") {
    RETURN_IF_ERROR(database::FreezeWrites(*tenant_db, r.name)
                        .WithContext("making database " + r.name + " read-only"));
    spdlog::info("database {} of {} is over its quota ({} of {} bytes): read-only", r.name,
                 r.org_id, *size_bytes, limits.quota_bytes);
  } else {
    RETURN_IF_ERROR(database::ThawWrites(*tenant_db, r.name)
                        .WithContext("making database " + r.name + " writable again"));
    spdlog::info("database {} of {} is under its quota again ({} of {} bytes)", r.name, r.org_id,
                 *size_bytes, limits.quota_bytes);
  }
  r.status = wanted;
  r.updated_at = NowMillis();
  RETURN_IF_ERROR(store_.PutDatabase(r));
  return r;
}

Result<store::DatabaseRecord> DatabaseService::CheckQuota(const std::string& org_id) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(store::DatabaseRecord r, store_.GetDatabase(org_id));
  if (r.status == "provisioning") return r;
  int64_t size = 0;
  return CheckQuotaLocked(std::move(r), &size);
}

void DatabaseService::StartQuotaChecks(std::chrono::milliseconds interval) {
  std::lock_guard lock(quota_mu_);
  if (quota_thread_.joinable() || !server_) return;
  quota_stopping_ = false;
  quota_thread_ =
      std::thread(Guarded("database quota checks", [this, interval] { QuotaLoop(interval); }));
}

void DatabaseService::StopQuotaChecks() {
  {
    std::lock_guard lock(quota_mu_);
    quota_stopping_ = true;
  }
  quota_wake_.notify_all();
  if (quota_thread_.joinable()) quota_thread_.join();
}

void DatabaseService::QuotaLoop(std::chrono::milliseconds interval) {
  std::unique_lock lock(quota_mu_);
  while (!quota_stopping_) {
    lock.unlock();
    auto all = store_.ListDatabases();
    if (!all.ok()) spdlog::warn("database quota check: {}", all.status().message());
    for (const auto& r : all.ok() ? *all : std::vector<store::DatabaseRecord>{}) {
      if (r.status == "provisioning") continue;
      // One organization's check that threw does not skip the others'.
      RunGuarded("database quota check of " + r.org_id, [&] {
        auto checked = CheckQuota(r.org_id);
        // A database deleted meanwhile is not an error.
        if (!checked.ok() && checked.status().code() != Code::kNotFound)
          spdlog::warn("database quota check of {}: {}", r.org_id, checked.status().message());
      });
    }
    lock.lock();
    quota_wake_.wait_for(lock, interval, [this] { return quota_stopping_; });
  }
}

}  // namespace adapt::core
