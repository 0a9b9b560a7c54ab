// SqliteStore: Commands: records of processes run in sandboxes.
#include "store/command_record_codec.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

Status SqliteStore::PutCommand(const CommandRecord& c) {
  return Guard("saving command", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement q(db_,
                        "INSERT INTO commands(id, org_id, sandbox_id, status, data, created_at, "
                        "stdout, stderr) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
                        "status = excluded.status, data = excluded.data, "
                        "stdout = excluded.stdout, stderr = excluded.stderr");
    std::string data = EncodeCommandData(c);
    q.bind(1, c.id);
    q.bind(2, c.org_id);
    q.bind(3, c.sandbox_id);
    q.bind(4, c.status);
    q.bindNoCopy(5, data);
    q.bind(6, c.created_at);
    // Up to megabytes each: SQLite reads them in place, as they outlive the statement's exec.
    q.bindNoCopy(7, c.stdout_text);
    q.bindNoCopy(8, c.stderr_text);
    q.exec();
    if (c.status != "running") {
      SQLite::Statement trim(db_,
                             "DELETE FROM commands WHERE seq IN (SELECT seq FROM commands WHERE "
                             "sandbox_id = ? AND status != 'running' ORDER BY seq DESC LIMIT -1 "
                             "OFFSET ?)");
      trim.bind(1, c.sandbox_id);
      trim.bind(2, kKeptEndedCommandsPerSandbox);
      trim.exec();
    }
    tx.commit();
    return Status::Ok();
  });
}

Result<CommandRecord> SqliteStore::GetCommand(const std::string& org_id,
                                              const std::string& sandbox_id,
                                              const std::string& id) {
  return Guard<Result<CommandRecord>>("reading command", [&]() -> Result<CommandRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kCommandColumns +
                                 " FROM commands WHERE id = ? AND sandbox_id = ? AND org_id = ?");
    q.bind(1, id);
    q.bind(2, sandbox_id);
    q.bind(3, org_id);
    if (!q.executeStep()) return NotFound("command " + id + " not found");
    return ReadCommand(q);
  });
}

Result<CommandPage> SqliteStore::ListCommands(const std::string& org_id,
                                              const std::string& sandbox_id, int limit,
                                              std::optional<int64_t> before_seq) {
  return Guard<Result<CommandPage>>("listing commands", [&]() -> Result<CommandPage> {
    SQLite::Statement q(db_, std::string("SELECT ") + kCommandColumns +
                                 " FROM commands WHERE org_id = ? AND sandbox_id = ? AND "
                                 "seq < ? ORDER BY seq DESC LIMIT ?");
    q.bind(1, org_id);
    q.bind(2, sandbox_id);
    q.bind(3, before_seq.value_or(std::numeric_limits<int64_t>::max()));
    q.bind(4, limit + 1);
    CommandPage page;
    while (q.executeStep()) page.items.push_back(ReadCommand(q));
    if (page.items.size() > static_cast<size_t>(limit)) {
      page.items.pop_back();
      page.next_seq = page.items.back().seq;
    }
    return page;
  });
}

Result<std::vector<CommandRecord>> SqliteStore::ListCommandsWithStatus(const std::string& status) {
  return Guard<Result<std::vector<CommandRecord>>>(
      "listing commands", [&]() -> Result<std::vector<CommandRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kCommandColumns +
                                     " FROM commands WHERE status = ? ORDER BY seq");
        q.bind(1, status);
        std::vector<CommandRecord> out;
        while (q.executeStep()) out.push_back(ReadCommand(q));
        return out;
      });
}

CommandRecord SqliteStore::ReadCommand(SQLite::Statement& q) {
  CommandRecord c;
  c.seq = q.getColumn(0).getInt64();
  c.id = q.getColumn(1).getString();
  c.org_id = q.getColumn(2).getString();
  c.sandbox_id = q.getColumn(3).getString();
  c.status = q.getColumn(4).getString();
  DecodeCommandData(q.getColumn(5).getString(), c);
  c.created_at = q.getColumn(6).getInt64();
  // NULL in a row written before migration 38: its output came from the JSON, above.
  if (auto out = q.getColumn(7); !out.isNull()) c.stdout_text = out.getString();
  if (auto err = q.getColumn(8); !err.isNull()) c.stderr_text = err.getString();
  return c;
}

}  // namespace adapt::store
