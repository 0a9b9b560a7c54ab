// DatabaseService's backup and deletion (issue 19): a pg_dump custom-format archive written into
// the organization's own object storage, and the database dropped on an exact confirmation.
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "core/database_service.h"
#include "database/admin_session.h"
#include "database/pg_session.h"
#include "os/durable_file.h"
#include "os/files.h"

namespace adapt::core {
namespace {

constexpr const char* kDumpBucket = "objects";
constexpr const char* kDumpPrefix = "database-dumps/";

Result<store::DatabaseRecord> MadeDatabase(store::DatabaseStore& store, const std::string& org_id) {
  auto r = store.GetDatabase(org_id);
  if (!r.ok() && r.status().code() == Code::kNotFound)
    return NotFound("the organization has no database (POST /v1/database makes it)");
  return r;
}

}  // namespace

Result<DatabaseDump> DatabaseService::Dump(const Principal& who) {
  if (!server_ || !objects_)
    return Status(Code::kUnavailable, "this adaptd has no PostgreSQL server");
  ASSIGN_OR_RETURN(store::DatabaseRecord r, MadeDatabase(store_, who.org_id));
  if (r.status == "provisioning")
    return Conflict("the organization's database is still being made; try again shortly");
  RETURN_IF_ERROR(server_->Start());
  RETURN_IF_ERROR(os::MakeDirs(server_->ScratchDir(), 0700));
  const std::string path = server_->ScratchDir() + "/" + r.name + "-" + RandomToken(8) + ".dump";
  Status dumped = server_->Dump(r.name, path);
  Result<store::ObjectRecord> object = dumped;
  DatabaseDump dump;
  dump.created_at = NowMillis();
  dump.bucket = kDumpBucket;
  dump.key = kDumpPrefix + FormatRfc3339(dump.created_at) + ".dump";
  if (dumped.ok()) {
    auto reader = os::FileReader::Open(path);
    if (reader.ok()) {
      object = objects_->Put(who.org_id, dump.key, "application/vnd.postgresql.dump",
                             [&](char* buf, size_t n) { return (*reader)->Read(buf, n); });
    } else {
      object = reader.status();
    }
  }
  (void)os::RemoveTree(path);
  if (!object.ok()) return object.status().WithContext("dumping the organization's database");
  dump.size_bytes = static_cast<int64_t>(object->size);
  dump.sha256 = object->sha256;
  spdlog::info("database {} of {}: dumped to {} ({} bytes)", r.name, who.org_id, dump.key,
               dump.size_bytes);
  return dump;
}

Status DatabaseService::Delete(const Principal& who, const std::string& confirm) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(store::DatabaseRecord r, MadeDatabase(store_, who.org_id));
  if (confirm != who.org_id)
    return InvalidArgument("confirm",
                           "deleting the organization's database is permanent: set confirm to "
                           "exactly the organization's id");
  if (!server_) return Status(Code::kUnavailable, "this adaptd has no PostgreSQL server");
  RETURN_IF_ERROR(server_->Start());
  ASSIGN_OR_RETURN(auto pg, database::OpenAdminSession(*server_));
  const std::string name = pg->QuoteIdentifier(r.name);
  // FORCE ends its sessions (the sandboxes'); the roles go after the database they owned.
  RETURN_IF_ERROR(pg->Execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
                      .WithContext("deleting the organization's database"));
  RETURN_IF_ERROR(pg->Execute("DROP ROLE IF EXISTS " + name));
  RETURN_IF_ERROR(pg->Execute("DROP ROLE IF EXISTS " + pg->QuoteIdentifier(r.name + "_frozen")));
  RETURN_IF_ERROR(store_.DeleteDatabase(who.org_id));
  spdlog::info("database {} of {}: deleted", r.name, who.org_id);
  return Status::Ok();
}

}  // namespace adapt::core
