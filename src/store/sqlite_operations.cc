// SqliteStore: sandbox operations (checkpoints and restores).
#include "store/sqlite_store_impl.h"

namespace adapt::store {
namespace {

constexpr const char* kOperationColumns =
    "id, org_id, kind, sandbox_id, phase, bytes, total_bytes, error, started_at, finished_at, "
    "app_id, release_id, checkpoint";

OperationRecord ReadOperation(SQLite::Statement& q) {
  OperationRecord r;
  r.id = q.getColumn(0).getString();
  r.org_id = q.getColumn(1).getString();
  r.kind = q.getColumn(2).getString();
  r.sandbox_id = q.getColumn(3).getString();
  r.phase = q.getColumn(4).getString();
  r.bytes = static_cast<uint64_t>(q.getColumn(5).getInt64());
  r.total_bytes = static_cast<uint64_t>(q.getColumn(6).getInt64());
  r.error = q.getColumn(7).getString();
  r.started_at = q.getColumn(8).getInt64();
  r.finished_at = q.getColumn(9).getInt64();
  r.app_id = q.getColumn(10).getString();
  r.release_id = q.getColumn(11).getString();
  r.checkpoint = q.getColumn(12).getString();
  return r;
}

}  // namespace

Status SqliteStore::PutOperation(const OperationRecord& op) {
  return Guard("saving operation", [&]() -> Status {
    SQLite::Statement q(
        db_, std::string("INSERT INTO operations(") + kOperationColumns +
                 ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET phase = "
                 "excluded.phase, bytes = excluded.bytes, total_bytes = excluded.total_bytes, "
                 "error = excluded.error, finished_at = excluded.finished_at, release_id = "
                 "excluded.release_id");
    q.bind(1, op.id);
    q.bind(2, op.org_id);
    q.bind(3, op.kind);
    q.bind(4, op.sandbox_id);
    q.bind(5, op.phase);
    q.bind(6, static_cast<int64_t>(op.bytes));
    q.bind(7, static_cast<int64_t>(op.total_bytes));
    q.bind(8, op.error);
    q.bind(9, op.started_at);
    q.bind(10, op.finished_at);
    q.bind(11, op.app_id);
    q.bind(12, op.release_id);
    q.bind(13, op.checkpoint);
    q.exec();
    return Status::Ok();
  });
}

Result<OperationRecord> SqliteStore::GetOperation(const std::string& org_id,
                                                  const std::string& id) {
  return Guard<Result<OperationRecord>>("reading operation", [&]() -> Result<OperationRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kOperationColumns +
                                 " FROM operations WHERE org_id = ? AND id = ?");
    q.bind(1, org_id);
    q.bind(2, id);
    if (!q.executeStep()) return NotFound("operation " + id + " not found");
    return ReadOperation(q);
  });
}

Result<std::vector<OperationRecord>> SqliteStore::ListOpenOperations(
    const std::string& sandbox_id) {
  return Guard<Result<std::vector<OperationRecord>>>(
      "listing operations", [&]() -> Result<std::vector<OperationRecord>> {
        // Kept prepared: every command and file operation asks (RefuseDuringCheckpointWork).
        auto lease = statements_.Get(std::string("SELECT ") + kOperationColumns +
                                     " FROM operations WHERE sandbox_id = ? AND phase IN "
                                     "('Pending', 'Running') ORDER BY seq");
        SQLite::Statement& q = *lease;
        q.bind(1, sandbox_id);
        std::vector<OperationRecord> out;
        while (q.executeStep()) out.push_back(ReadOperation(q));
        return out;
      });
}

Result<std::vector<OperationRecord>> SqliteStore::ListAllOpenOperations() {
  return Guard<Result<std::vector<OperationRecord>>>(
      "listing operations", [&]() -> Result<std::vector<OperationRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kOperationColumns +
                                     " FROM operations WHERE phase IN ('Pending', 'Running') "
                                     "ORDER BY seq");
        std::vector<OperationRecord> out;
        while (q.executeStep()) out.push_back(ReadOperation(q));
        return out;
      });
}

}  // namespace adapt::store
