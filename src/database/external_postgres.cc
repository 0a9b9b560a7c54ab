#include "database/external_postgres.h"

#include "base/log.h"
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
