#include "core/database_service.h"

#include "base/fault_point.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "core/secret_cipher.h"
#include "database/admin_session.h"
#include "database/pg_session.h"
#include "database/write_freeze.h"

namespace adapt::core {
namespace {

// A literal for the statements that take none as a parameter (ALTER ROLE ... PASSWORD).
std::string QuoteLiteral(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string PasswordAad(const std::string& name) { return "database:" + name; }

// On an external server, every tenant role is a member of this NOLOGIN role, so that the
// operator's pg_hba can name them all ("+adapt-tenants"; PostgreSQL 15's pg_hba has no
// patterns for users). The hyphen keeps it apart from every DatabaseName.
constexpr const char* kTenantGroup = "adapt-tenants";

}  // namespace

std::string DatabaseName(const std::string& org_id) {
  bool plain = !org_id.empty() && org_id.size() <= 50;
  for (char c : org_id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) plain = false;
  }
  return "adapt_" + (plain ? org_id : Sha256Hex(org_id).substr(0, 32));
}

DatabaseService::DatabaseService(store::DatabaseStore& store, database::DatabaseServer* server,
                                 std::string master_key, DatabaseLimits limits)
    : store_(store), server_(server), master_key_(std::move(master_key)), limits_(limits) {}

DatabaseService::~DatabaseService() { StopQuotaChecks(); }

DatabaseLimits DatabaseService::LimitsOf(const std::string& org_id) const {
  std::function<DatabaseLimits(const std::string&)> limits_of;
  {
    std::lock_guard lock(limits_mu_);
    limits_of = limits_of_;
  }
  return limits_of ? limits_of(org_id) : limits_;
}

DatabaseView DatabaseService::Unavailable(const std::string& org_id,
                                          const std::optional<store::DatabaseRecord>& r) const {
  DatabaseView v;
  v.status = "unavailable";
  if (r) v.created_at = r->created_at;
  DatabaseLimits limits = LimitsOf(org_id);
  v.quota_bytes = limits.quota_bytes;
  v.connection_limit = limits.connection_limit;
  return v;
}

Result<std::string> DatabaseService::OpenPassword(const store::DatabaseRecord& r) {
  ASSIGN_OR_RETURN(std::string key, DeriveSecretKey(master_key_, r.org_id));
  return OpenSecret(key, PasswordAad(r.name), r.sealed_password);
}

Status DatabaseService::Provision(const store::DatabaseRecord& r, const std::string& password) {
  if (!server_) return Status(Code::kUnavailable, "this adaptd has no PostgreSQL server");
  RETURN_IF_ERROR(server_->Start());
  ASSIGN_OR_RETURN(auto pg, database::OpenAdminSession(*server_));
  const std::string role = pg->QuoteIdentifier(r.name);
  ASSIGN_OR_RETURN(std::string verifier, pg->EncryptPassword(r.name, password));
  ASSIGN_OR_RETURN(auto role_exists,
                   pg->QueryValue("SELECT 1 FROM pg_roles WHERE rolname = $1", {r.name}));
  const std::string attributes =
      " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT "
      "CONNECTION LIMIT " +
      std::to_string(LimitsOf(r.org_id).connection_limit) + " PASSWORD " + QuoteLiteral(verifier);
  RETURN_IF_ERROR(pg->Execute((role_exists ? "ALTER ROLE " : "CREATE ROLE ") + role + attributes));
  // An external server's admin may be no superuser: it owns nothing of the role until it joins.
  RETURN_IF_ERROR(database::JoinRole(*pg, r.name));
  // Defaults a session may SET otherwise; temp_file_limit is superuser-only, so it binds.
  RETURN_IF_ERROR(pg->Execute("ALTER ROLE " + role + " SET statement_timeout = " +
                              std::to_string(limits_.statement_timeout_ms)));
  RETURN_IF_ERROR(pg->Execute("ALTER ROLE " + role + " SET idle_in_transaction_session_timeout = " +
                              std::to_string(limits_.idle_in_transaction_timeout_ms)));
  RETURN_IF_ERROR(pg->Execute("ALTER ROLE " + role + " SET temp_file_limit = " +
                              std::to_string(limits_.temp_file_limit_kib))
                      .WithContext("setting the role's temp_file_limit (an admin role that is no "
                                   "superuser needs GRANT SET ON PARAMETER temp_file_limit)"));
  ASSIGN_OR_RETURN(auto db_exists,
                   pg->QueryValue("SELECT 1 FROM pg_database WHERE datname = $1", {r.name}));
  if (!db_exists) RETURN_IF_ERROR(pg->Execute("CREATE DATABASE " + role + " OWNER " + role));
  RETURN_IF_ERROR(pg->Execute("REVOKE ALL ON DATABASE " + role + " FROM PUBLIC"));
  if (server_->owns_cluster()) {
    // No tenant reaches the server's own databases either (pg_hba's sameuser already refuses).
    RETURN_IF_ERROR(pg->Execute("REVOKE CONNECT, TEMPORARY ON DATABASE postgres FROM PUBLIC"));
  } else {
    // The operator's databases are theirs to guard; the group lets their pg_hba name tenants.
    const std::string group = pg->QuoteIdentifier(kTenantGroup);
    ASSIGN_OR_RETURN(auto group_exists,
                     pg->QueryValue("SELECT 1 FROM pg_roles WHERE rolname = $1", {kTenantGroup}));
    if (!group_exists) RETURN_IF_ERROR(pg->Execute("CREATE ROLE " + group + " NOLOGIN"));
    RETURN_IF_ERROR(pg->Execute("GRANT " + group + " TO " + role));
  }
  return Status::Ok();
}

Result<store::DatabaseRecord> DatabaseService::Ensure(const std::string& org_id) {
  std::lock_guard lock(mu_);
  auto existing = store_.GetDatabase(org_id);
  if (existing.ok() && existing->status != "provisioning") return *existing;
  if (!existing.ok() && existing.status().code() != Code::kNotFound) return existing.status();
  store::DatabaseRecord r;
  std::string password;
  if (existing.ok()) {
    r = *existing;
    ASSIGN_OR_RETURN(password, OpenPassword(r));
  } else {
    r.org_id = org_id;
    r.name = DatabaseName(org_id);
    r.status = "provisioning";
    r.created_at = r.updated_at = NowMillis();
    password = RandomToken(24);
    ASSIGN_OR_RETURN(std::string key, DeriveSecretKey(master_key_, org_id));
    ASSIGN_OR_RETURN(r.sealed_password, SealSecret(key, PasswordAad(r.name), password));
    // Recorded first, so that a crash mid-way is finished by Reconcile at the next start-up
    // (every step of Provision is idempotent).
    RETURN_IF_ERROR(store_.PutDatabase(r));
    ADAPT_FAULT_POINT("database.create.after_record");
  }
  if (Status st = Provision(r, password); !st.ok()) {
    Status failed =
        st.WithContext("making the organization's database").WithCode(Code::kUnavailable);
    // Past the first step the messages are the server's own: its paths, its admin's errors.
    if (server_ && failed.client_message().empty())
      failed = failed.WithClientMessage(
          "the database server could not make the organization's database; retry later");
    return failed;
  }
  r.status = "ready";
  r.updated_at = NowMillis();
  RETURN_IF_ERROR(store_.PutDatabase(r));
  spdlog::info("database {} of {} is ready", r.name, org_id);
  return r;
}

void DatabaseService::Reconcile() {
  auto records = store_.ListDatabases();
  if (!records.ok()) {
    spdlog::error("databases: listing them to finish those a crash cut: {}",
                  records.status().message());
    return;
  }
  std::vector<store::DatabaseRecord> cut;
  for (const store::DatabaseRecord& r : *records) {
    if (r.status == "provisioning") cut.push_back(r);
  }
  if (cut.empty() || !server_) return;
  // Once for all of them: a server that cannot start would make each wait for pg_ctl.
  if (Status st = server_->Start(); !st.ok()) {
    spdlog::error("databases: {} stay provisioning until PostgreSQL is back: {}", cut.size(),
                  st.message());
    return;
  }
  for (const store::DatabaseRecord& r : cut) {
    spdlog::info("database {} of {}: finishing what a crash cut", r.name, r.org_id);
    if (auto made = Ensure(r.org_id); !made.ok())
      spdlog::error("database {} of {} stays provisioning: {}", r.name, r.org_id,
                    made.status().message());
  }
}

Result<DatabaseView> DatabaseService::Describe(const Principal& who) {
  DatabaseLimits limits = LimitsOf(who.org_id);
  DatabaseView v;
  v.quota_bytes = limits.quota_bytes;
  v.connection_limit = limits.connection_limit;
  auto record = store_.GetDatabase(who.org_id);
  if (!record.ok()) {
    if (record.status().code() != Code::kNotFound) return record.status();
    if (!server_) return Unavailable(who.org_id, std::nullopt);
    // An external server is asked (one connection): creating would fail while it is away. The
    // embedded one is started only when a database is made.
    if (!server_->owns_cluster() && !server_->Start().ok())
      return Unavailable(who.org_id, std::nullopt);
    v.status = "not_created";
    v.version = server_->version();
    return v;
  }
  v.created_at = record->created_at;
  v.status = record->status;
  if (!server_ || !server_->Start().ok()) return Unavailable(who.org_id, *record);
  if (record->status != "provisioning") {
    // On demand: a quota the plan changed, or a size that changed, takes effect now.
    std::lock_guard lock(mu_);
    auto checked = CheckQuotaLocked(*record, &v.size_bytes);
    if (!checked.ok()) {
      spdlog::warn("database of {}: {}", who.org_id, checked.status().message());
      return Unavailable(who.org_id, *record);
    }
    v.status = checked->status;
  }
  auto pg = database::OpenAdminSession(*server_);
  if (!pg.ok()) return Unavailable(who.org_id, *record);
  v.version = (*pg)->ServerVersion();
  if (record->status == "provisioning") return v;
  auto connections = (*pg)->QueryValue(
      "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client "
      "backend'",
      {record->name});
  if (!connections.ok() || !*connections) return Unavailable(who.org_id, *record);
  v.connections = std::stoll(**connections);
  return v;
}

Result<DatabaseView> DatabaseService::Create(const Principal& who) {
  RETURN_IF_ERROR(Ensure(who.org_id).status());
  return Describe(who);
}

Result<DatabaseCredentials> DatabaseService::Credentials(const std::string& org_id) {
  ASSIGN_OR_RETURN(store::DatabaseRecord r, Ensure(org_id));
  ASSIGN_OR_RETURN(std::string password, OpenPassword(r));
  return DatabaseCredentials{r.name, password, proxy_port_};
}

Result<DatabaseView> DatabaseService::RotatePassword(const Principal& who) {
  ASSIGN_OR_RETURN(store::DatabaseRecord r, Ensure(who.org_id));
  {
    std::lock_guard lock(mu_);
    std::string password = RandomToken(24);
    if (!server_) return Status(Code::kUnavailable, "this adaptd has no PostgreSQL server");
    RETURN_IF_ERROR(server_->Start());
    ASSIGN_OR_RETURN(auto pg, database::OpenAdminSession(*server_));
    ASSIGN_OR_RETURN(std::string verifier, pg->EncryptPassword(r.name, password));
    RETURN_IF_ERROR(pg->Execute("ALTER ROLE " + pg->QuoteIdentifier(r.name) + " PASSWORD " +
                                QuoteLiteral(verifier)));
    ASSIGN_OR_RETURN(std::string key, DeriveSecretKey(master_key_, r.org_id));
    ASSIGN_OR_RETURN(r.sealed_password, SealSecret(key, PasswordAad(r.name), password));
    r.updated_at = NowMillis();
    RETURN_IF_ERROR(store_.PutDatabase(r));
  }
  return Describe(who);
}

}  // namespace adapt::core
