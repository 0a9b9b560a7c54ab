// SqliteStore: Images pulled or imported by an organization.
#include "store/sqlite_store_impl.h"

namespace adapt::store {

using nlohmann::json;

Status SqliteStore::PutImage(const ImageRecord& r) {
  return Guard("saving image", [&]() -> Status {
    SQLite::Statement q(db_,
                        "INSERT INTO images(id, org_id, reference, status, data, created_at) "
                        "VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                        "status = excluded.status, data = excluded.data");
    q.bind(1, r.id);
    q.bind(2, r.org_id);
    q.bind(3, r.reference);
    q.bind(4, r.status);
    q.bind(5, r.data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    q.bind(6, r.created_at);
    q.exec();
    return Status::Ok();
  });
}

Result<ImageRecord> SqliteStore::GetImage(const std::string& org_id, const std::string& id) {
  return Guard<Result<ImageRecord>>("reading image", [&]() -> Result<ImageRecord> {
    SQLite::Statement q(
        db_, std::string("SELECT ") + kImageColumns + " FROM images WHERE id = ? AND org_id = ?");
    q.bind(1, id);
    q.bind(2, org_id);
    if (!q.executeStep()) return NotFound("image " + id + " not found");
    return ReadImage(q);
  });
}

Result<std::vector<ImageRecord>> SqliteStore::ListImages(const std::string& org_id) {
  return Guard<Result<std::vector<ImageRecord>>>(
      "listing images", [&]() -> Result<std::vector<ImageRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kImageColumns +
                                     " FROM images WHERE ? = '' OR org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        q.bind(2, org_id);
        std::vector<ImageRecord> out;
        while (q.executeStep()) out.push_back(ReadImage(q));
        return out;
      });
}

Status SqliteStore::DeleteImage(const std::string& org_id, const std::string& id) {
  return Guard("deleting image", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM images WHERE id = ? AND org_id = ?");
    q.bind(1, id);
    q.bind(2, org_id);
    if (q.exec() == 0) return NotFound("image " + id + " not found");
    return Status::Ok();
  });
}

ImageRecord SqliteStore::ReadImage(SQLite::Statement& q) {
  ImageRecord r;
  r.id = q.getColumn(0).getString();
  r.org_id = q.getColumn(1).getString();
  r.reference = q.getColumn(2).getString();
  r.status = q.getColumn(3).getString();
  r.data = nlohmann::json::parse(q.getColumn(4).getString(), nullptr, false);
  if (r.data.is_discarded()) r.data = nlohmann::json::object();
  r.created_at = q.getColumn(5).getInt64();
  return r;
}

}  // namespace adapt::store
