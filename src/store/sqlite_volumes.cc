// SqliteStore: persistent storage volumes and the sandboxes attached to them.
#include <nlohmann/json.hpp>

#include "store/sandbox_limit_check.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

// What ReadVolume reads: the columns, then the insertion sequence the list pages on.
constexpr const char* kVolumeColumns = "id, org_id, name, size_mib, status, data, created_at, seq";

}  // namespace

Status SqliteStore::PutVolume(const VolumeRecord& v, std::optional<int64_t> max_gib) {
  return Guard("saving storage volume", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement same(db_, "SELECT id FROM volumes WHERE org_id = ? AND name = ?");
    same.bind(1, v.org_id);
    same.bind(2, v.name);
    if (same.executeStep() && same.getColumn(0).getString() != v.id)
      return Conflict("storage '" + v.name + "' already exists");
    // A new volume for an organization being deleted is refused here, in the insert's own
    // transaction (a create authenticated before the close could finish after its volumes
    // were deleted, leaving an image file no row names); a status change of one it has goes on.
    SQLite::Statement known(db_, "SELECT 1 FROM volumes WHERE id = ?");
    known.bind(1, v.id);
    if (!known.executeStep()) RETURN_IF_ERROR(RefuseIfOrgDeleting(db_, v.org_id));
    if (max_gib) {
      SQLite::Statement used(db_,
                             "SELECT COALESCE(SUM(size_mib), 0), "
                             "COALESCE(SUM(id = ?), 0) FROM volumes WHERE org_id = ?");
      used.bind(1, v.id);
      used.bind(2, v.org_id);
      used.executeStep();
      if (used.getColumn(1).getInt64() == 0)
        RETURN_IF_ERROR(CheckStorageLimit(*max_gib, used.getColumn(0).getInt64(), v.size_mib));
    }
    SQLite::Statement q(db_,
                        "INSERT INTO volumes(id, org_id, name, size_mib, status, data, created_at) "
                        "VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                        "status = excluded.status, data = excluded.data");
    q.bind(1, v.id);
    q.bind(2, v.org_id);
    q.bind(3, v.name);
    q.bind(4, v.size_mib);
    q.bind(5, v.status);
    // The `data` column is a JSON object, as earlier versions wrote it.
    nlohmann::json data = nlohmann::json::object();
    if (!v.key_identifier.empty()) data["keyIdentifier"] = v.key_identifier;
    q.bind(6, data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    q.bind(7, v.created_at);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Result<VolumeRecord> SqliteStore::GetVolumeByName(const std::string& org_id,
                                                  const std::string& name) {
  return Guard<Result<VolumeRecord>>("reading storage volume", [&]() -> Result<VolumeRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kVolumeColumns +
                                 " FROM volumes WHERE org_id = ? AND name = ?");
    q.bind(1, org_id);
    q.bind(2, name);
    if (!q.executeStep()) return NotFound("storage '" + name + "' not found");
    return ReadVolume(q);
  });
}

Result<std::vector<VolumeRecord>> SqliteStore::ListVolumes(const std::string& org_id) {
  return Guard<Result<std::vector<VolumeRecord>>>(
      "listing storage volumes", [&]() -> Result<std::vector<VolumeRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kVolumeColumns +
                                     " FROM volumes WHERE ? = '' OR org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        q.bind(2, org_id);
        std::vector<VolumeRecord> out;
        while (q.executeStep()) out.push_back(ReadVolume(q));
        return out;
      });
}

std::vector<SandboxRecord> SqliteStore::AttachmentsLocked(const std::string& org_id,
                                                          const std::string& name) {
  SQLite::Statement q(db_,
                      "SELECT id, status, created_at FROM sandboxes WHERE org_id = ? AND "
                      "json_extract(config, '$.storage') = ? AND "
                      "status NOT IN ('completed', 'failed', 'deleted') ORDER BY seq");
  q.bind(1, org_id);
  q.bind(2, name);
  std::vector<SandboxRecord> out;
  while (q.executeStep()) {
    SandboxRecord r;
    r.id = q.getColumn(0).getString();
    r.org_id = org_id;
    r.status = q.getColumn(1).getString();
    r.created_at = q.getColumn(2).getInt64();
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<SandboxRecord>> SqliteStore::ListVolumeAttachments(const std::string& org_id,
                                                                      const std::string& name) {
  return Guard<Result<std::vector<SandboxRecord>>>(
      "listing storage attachments",
      [&]() -> Result<std::vector<SandboxRecord>> { return AttachmentsLocked(org_id, name); });
}

Status SqliteStore::BeginDeleteVolume(const std::string& org_id, const std::string& id) {
  return Guard("deleting storage volume", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement cur(db_, "SELECT name, status FROM volumes WHERE id = ? AND org_id = ?");
    cur.bind(1, id);
    cur.bind(2, org_id);
    if (!cur.executeStep()) return NotFound("storage " + id + " not found");
    std::string name = cur.getColumn(0).getString();
    std::string status = cur.getColumn(1).getString();
    if (status == "deleting") return Status::Ok();
    if (status != "ready") return Conflict("storage '" + name + "' is " + status);
    auto users = AttachmentsLocked(org_id, name);
    if (!users.empty()) {
      std::string ids;
      for (const auto& u : users) ids += (ids.empty() ? "" : ", ") + u.id;
      return Conflict("storage '" + name + "' is in use by sandbox " + ids +
                      "; delete those sandboxes first");
    }
    SQLite::Statement q(db_, "UPDATE volumes SET status = 'deleting' WHERE id = ?");
    q.bind(1, id);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Status SqliteStore::DeleteVolume(const std::string& id) {
  return Guard("deleting storage volume", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM volumes WHERE id = ?");
    q.bind(1, id);
    q.exec();
    return Status::Ok();
  });
}

VolumeRecord SqliteStore::ReadVolume(SQLite::Statement& q) {
  VolumeRecord v;
  v.id = q.getColumn(0).getString();
  v.org_id = q.getColumn(1).getString();
  v.name = q.getColumn(2).getString();
  v.size_mib = q.getColumn(3).getInt64();
  v.status = q.getColumn(4).getString();
  auto data = nlohmann::json::parse(q.getColumn(5).getString(), nullptr, false);
  if (data.is_object() && data.contains("keyIdentifier") && data["keyIdentifier"].is_string())
    v.key_identifier = data["keyIdentifier"];
  v.created_at = q.getColumn(6).getInt64();
  v.seq = q.getColumn(7).getInt64();
  return v;
}

}  // namespace adapt::store
