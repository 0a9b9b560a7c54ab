// SqliteStore: Images pulled or imported by an organization.
#include <nlohmann/json.hpp>

#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

using nlohmann::json;

namespace {

// The `data` column: a JSON object of the fields without a column of their own, in the shape
// earlier versions wrote (source, format, name, digest, size, platform, config, error).
std::string EncodeImageData(const ImageRecord& r) {
  json d = json::object();
  if (r.imported) {
    d["source"] = "import";
    if (!r.import_format.empty()) d["format"] = r.import_format;
    d["name"] = r.import_name.empty() ? json(nullptr) : json(r.import_name);
  }
  if (!r.digest.empty()) d["digest"] = r.digest;
  if (r.size) d["size"] = *r.size;
  if (!r.platform.empty()) d["platform"] = r.platform;
  if (!r.config_json.empty()) {
    json config = json::parse(r.config_json, nullptr, false);
    if (!config.is_discarded()) d["config"] = config;
  }
  if (!r.error.empty()) d["error"] = r.error;
  return d.dump(-1, ' ', false, json::error_handler_t::replace);
}

void DecodeImageData(const std::string& text, ImageRecord& r) {
  json d = json::parse(text, nullptr, false);
  if (!d.is_object()) return;
  auto str = [&](const char* key) {
    return d.contains(key) && d[key].is_string() ? d[key].get<std::string>() : std::string();
  };
  r.imported = str("source") == "import";
  r.import_format = str("format");
  r.import_name = str("name");
  r.digest = str("digest");
  if (d.contains("size") && d["size"].is_number_integer()) r.size = d["size"].get<int64_t>();
  r.platform = str("platform");
  if (d.contains("config"))
    r.config_json = d["config"].dump(-1, ' ', false, json::error_handler_t::replace);
  r.error = str("error");
}

// The six columns of an images row, in the order of every INSERT below.
void BindImageRow(SQLite::Statement& q, const ImageRecord& r) {
  q.bind(1, r.id);
  q.bind(2, r.org_id);
  q.bind(3, r.reference);
  q.bind(4, r.status);
  q.bind(5, EncodeImageData(r));
  q.bind(6, r.created_at);
}

}  // namespace

Status SqliteStore::PutImage(const ImageRecord& r) {
  return Guard("saving image", [&]() -> Status {
    SQLite::Statement q(db_,
                        "INSERT INTO images(id, org_id, reference, status, data, created_at) "
                        "VALUES (?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                        "status = excluded.status, data = excluded.data");
    BindImageRow(q, r);
    q.exec();
    return Status::Ok();
  });
}

Status SqliteStore::InsertImageWithinCaps(const ImageRecord& r, int max_images,
                                          int max_in_progress) {
  return Guard("saving image", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement count(db_,
                            "SELECT COUNT(*), COALESCE(SUM(status IN ('pulling', 'importing')), 0) "
                            "FROM images WHERE org_id = ?");
    count.bind(1, r.org_id);
    count.executeStep();
    const int64_t images = count.getColumn(0).getInt64();
    const int64_t in_progress = count.getColumn(1).getInt64();
    count.reset();
    if (max_images > 0 && images >= max_images)
      return Status(Code::kResourceExhausted,
                    "the organization already has " + std::to_string(max_images) +
                        " images, the most it may have; delete one first");
    const bool starts_work = r.status == "pulling" || r.status == "importing";
    if (starts_work && max_in_progress > 0 && in_progress >= max_in_progress)
      return Status(Code::kResourceExhausted,
                    std::to_string(max_in_progress) +
                        " image pulls or imports of the organization are already in progress, "
                        "the most it may have; retry when one has ended");
    SQLite::Statement q(db_,
                        "INSERT INTO images(id, org_id, reference, status, data, created_at) "
                        "VALUES (?,?,?,?,?,?)");
    BindImageRow(q, r);
    q.exec();
    tx.commit();
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
                                     ", seq FROM images WHERE ? = '' OR org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        q.bind(2, org_id);
        std::vector<ImageRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadImage(q));
          out.back().seq = q.getColumn(6).getInt64();
        }
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
  DecodeImageData(q.getColumn(4).getString(), r);
  r.created_at = q.getColumn(5).getInt64();
  return r;
}

}  // namespace adapt::store
