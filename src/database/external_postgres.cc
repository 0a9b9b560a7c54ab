#include "database/external_postgres.h"

#include <algorithm>
#include <charconv>

#include "base/log.h"
#include "database/connection_budget.h"
#include "database/pg_session.h"
#include "os/process.h"

namespace adapt::database {
namespace {

// For API answers: no host, no reason (adaptd's log has both).
constexpr const char* kUnreachable =
    "the organizations' PostgreSQL server is not available (adaptd's log says why)";

// What the admin role may do: "superuser", "creator" (CREATEDB and CREATEROLE) or "neither".
constexpr const char* kPrivileges =
    "SELECT CASE WHEN rolsuper THEN 'superuser' WHEN rolcreatedb AND rolcreaterole THEN 'creator' "
    "ELSE 'neither' END FROM pg_roles WHERE rolname = current_user";

// The slots any role may take: max_connections less the superusers' reserve and, from
// PostgreSQL 16, the pg_use_reserved_connections role's.
constexpr const char* kOpenSlots =
    "SELECT current_setting('max_connections')::int - "
    "current_setting('superuser_reserved_connections')::int - "
    "coalesce(nullif(current_setting('reserved_connections', true), '')::int, 0)";

}  // namespace

ExternalPostgres::ExternalPostgres(AdminUrl url, std::string scratch_dir, std::string bin_dir)
    : url_(std::move(url)), scratch_dir_(std::move(scratch_dir)), bin_dir_(std::move(bin_dir)) {}

std::string ExternalPostgres::AdminConnectionString(const std::string& database) const {
  return url_.ConnectionString(database, /*with_password=*/true);
}

std::string ExternalPostgres::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

std::optional<int64_t> ExternalPostgres::sandbox_sessions() const {
  std::lock_guard lock(mu_);
  return sandbox_sessions_;
}

void ExternalPostgres::OnSandboxSessions(std::function<void(int64_t)> changed) {
  std::lock_guard lock(mu_);
  sessions_changed_ = std::move(changed);
}

void ExternalPostgres::Note(bool reachable, const std::string& detail) {
  if (reachable_ == reachable) return;
  reachable_ = reachable;
  if (reachable)
    spdlog::info("PostgreSQL: using the external server {} ({})", url_.Redacted(), detail);
  else
    spdlog::warn("PostgreSQL: the external server {} cannot be used: {}", url_.Redacted(),
                 url_.Scrub(detail));
}

Status ExternalPostgres::Start() {
  auto session = PgSession::Open(AdminConnectionString(url_.database));
  std::lock_guard lock(mu_);
  if (!session.ok()) {
    Note(false, session.status().message());
    return Status(Code::kUnavailable, kUnreachable);
  }
  auto privileges = (*session)->QueryValue(kPrivileges);
  if (!privileges.ok() || !*privileges) {
    Note(false, privileges.ok() ? "the admin role is missing from pg_roles"
                                : privileges.status().message());
    return Status(Code::kUnavailable, kUnreachable);
  }
  const bool superuser = **privileges == "superuser";
  if (!superuser && **privileges != "creator") {
    Note(false, "the admin role " + url_.user + " needs CREATEDB and CREATEROLE");
    return Status(Code::kUnavailable, kUnreachable);
  }
  std::string full = (*session)->ServerVersion();
  version_ = full.substr(0, full.find('.'));
  auto slots = (*session)->QueryValue(kOpenSlots);
  int64_t open_slots = 0;
  if (slots.ok() && *slots &&
      std::from_chars((*slots)->data(), (*slots)->data() + (*slots)->size(), open_slots).ec ==
          std::errc()) {
    slots_unread_ = false;
    int64_t share = std::max<int64_t>(1, open_slots - kAdaptdConnections);
    if (sandbox_sessions_ != share) {
      sandbox_sessions_ = share;
      spdlog::info("PostgreSQL: the external server has room for {} sandbox sessions", share);
      if (sessions_changed_) sessions_changed_(share);
    }
  } else if (!slots_unread_) {
    // Once until it can be read again: Start runs at every use of the server. The last size
    // read stays in force meanwhile.
    slots_unread_ = true;
    spdlog::warn("PostgreSQL: the external server's max_connections could not be read: {}",
                 slots.ok() ? "no value" : url_.Scrub(slots.status().message()));
  }
  Note(true, "PostgreSQL " + full +
                 (superuser ? ", a superuser"
                            : ", no superuser: a database over its quota "
                              "can still create large objects"));
  return Status::Ok();
}

Status ExternalPostgres::Dump(const std::string& database, const std::string& path) const {
  // The password goes in pg_dump's environment, which only root can read, not its arguments.
  os::SpawnOptions spawn;
  spawn.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"};
  if (!url_.password.empty()) spawn.env->push_back("PGPASSWORD=" + url_.password);
  auto result =
      os::RunCommand({bin_dir_ + "/pg_dump", "--format=custom", "--file=" + path,
                      "--dbname=" + url_.ConnectionString(database, /*with_password=*/false)},
                     spawn);
  if (!result.ok()) return result.status().WithContext("running pg_dump");
  if (result->status.signaled() || result->status.exit_code != 0) {
    std::string out = url_.Scrub(result->output);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    if (auto nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
    spdlog::warn("PostgreSQL: pg_dump of {} on {} failed: {}", database, url_.Redacted(), out);
    return Status(Code::kUnavailable, "pg_dump of the organization's database failed");
  }
  return Status::Ok();
}

}  // namespace adapt::database
