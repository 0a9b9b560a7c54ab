// SqliteStore: automations (issue 18). The command and schedule are one JSON column (only this
// file reads or writes it); the env is sealed as a sandbox's is (sandbox_env_column.h).
#include <nlohmann/json.hpp>

#include "store/sandbox_env_column.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kAutomationColumns =
    "id, org_id, name, kind, sandbox_id, spec, env, enabled, paused_reason, version, "
    "consecutive_failures, next_due_at, created_at, updated_at";

std::string EncodeSpec(const AutomationRecord& a) {
  nlohmann::json j = {{"argv", a.argv},
                      {"cwd", a.cwd},
                      {"timeoutSeconds", a.timeout_seconds},
                      {"intervalSeconds", a.interval_seconds},
                      {"cron", a.cron},
                      {"timeZone", a.time_zone},
                      {"overlap", a.overlap},
                      {"catchUpSeconds", a.catch_up_seconds},
                      {"maxAttempts", a.max_attempts}};
  if (!a.desired_state.empty()) {
    j["desiredState"] = a.desired_state;
    j["windowSeconds"] = a.window_seconds;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Throws (turned into a Status by Guard) on a column this file did not write.
void DecodeSpec(const std::string& text, AutomationRecord& a) {
  auto j = nlohmann::json::parse(text);
  a.argv = j.at("argv").get<std::vector<std::string>>();
  a.cwd = j.at("cwd").get<std::string>();
  a.timeout_seconds = j.at("timeoutSeconds").get<int>();
  a.interval_seconds = j.at("intervalSeconds").get<int64_t>();
  a.cron = j.at("cron").get<std::string>();
  a.time_zone = j.at("timeZone").get<std::string>();
  a.overlap = j.at("overlap").get<std::string>();
  a.catch_up_seconds = j.at("catchUpSeconds").get<int64_t>();
  // Rows written before retries existed have none: the default.
  a.max_attempts = j.value("maxAttempts", 3);
  // Controllers only.
  a.desired_state = j.value("desiredState", "");
  a.window_seconds = j.value("windowSeconds", int64_t{0});
}

}  // namespace

AutomationRecord SqliteStore::ReadAutomation(SQLite::Statement& q) {
  AutomationRecord a;
  a.id = q.getColumn(0).getString();
  a.org_id = q.getColumn(1).getString();
  a.name = q.getColumn(2).getString();
  a.kind = q.getColumn(3).getString();
  a.sandbox_id = q.getColumn(4).getString();
  DecodeSpec(q.getColumn(5).getString(), a);
  auto env = DecodeEnvColumn(sealer_, a.org_id, a.id, q.getColumn(6).getString());
  if (!env.ok()) throw std::runtime_error(env.status().message());
  a.env = std::move(*env);
  a.enabled = q.getColumn(7).getInt() != 0;
  a.paused_reason = q.getColumn(8).getString();
  a.version = q.getColumn(9).getInt64();
  a.consecutive_failures = q.getColumn(10).getInt();
  a.next_due_at = q.getColumn(11).getInt64();
  a.created_at = q.getColumn(12).getInt64();
  a.updated_at = q.getColumn(13).getInt64();
  return a;
}

Result<AutomationRecord> SqliteStore::GetAutomationLocked(const std::string& org_id,
                                                          const std::string& id) {
  SQLite::Statement q(db_, std::string("SELECT ") + kAutomationColumns +
                               " FROM automations WHERE id = ? AND (? = '' OR org_id = ?)");
  q.bind(1, id);
  q.bind(2, org_id);
  q.bind(3, org_id);
  if (!q.executeStep()) return NotFound("automation '" + id + "' not found");
  return ReadAutomation(q);
}

Status SqliteStore::CreateAutomation(const AutomationRecord& a, int max_per_org) {
  return Guard("saving automation", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement count(db_, "SELECT COUNT(*) FROM automations WHERE org_id = ?");
    count.bind(1, a.org_id);
    count.executeStep();
    if (count.getColumn(0).getInt64() >= max_per_org) {
      return Status(Code::kResourceExhausted, "the organization already has " +
                                                  std::to_string(max_per_org) +
                                                  " automations, its limit");
    }
    ASSIGN_OR_RETURN(std::string env, EncodeEnvColumn(sealer_, a.org_id, a.id, a.env));
    SQLite::Statement ins(db_,
                          "INSERT INTO automations(id, org_id, name, kind, sandbox_id, spec, env, "
                          "enabled, paused_reason, version, consecutive_failures, next_due_at, "
                          "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, a.id);
    ins.bind(2, a.org_id);
    ins.bind(3, a.name);
    ins.bind(4, a.kind);
    ins.bind(5, a.sandbox_id);
    ins.bind(6, EncodeSpec(a));
    ins.bind(7, env);
    ins.bind(8, a.enabled ? 1 : 0);
    ins.bind(9, a.paused_reason);
    ins.bind(10, a.version);
    ins.bind(11, a.consecutive_failures);
    ins.bind(12, a.next_due_at);
    ins.bind(13, a.created_at);
    ins.bind(14, a.updated_at);
    ins.exec();
    tx.commit();
    return Status::Ok();
  });
}

Result<AutomationRecord> SqliteStore::GetAutomation(const std::string& org_id,
                                                    const std::string& id) {
  return Guard<Result<AutomationRecord>>("reading automation",
                                         [&] { return GetAutomationLocked(org_id, id); });
}

Result<std::vector<AutomationRecord>> SqliteStore::ListAutomations(const std::string& org_id) {
  return Guard<Result<std::vector<AutomationRecord>>>(
      "listing automations", [&]() -> Result<std::vector<AutomationRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kAutomationColumns +
                                     ", seq FROM automations WHERE org_id = ? ORDER BY seq");
        q.bind(1, org_id);
        std::vector<AutomationRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadAutomation(q));
          out.back().seq = q.getColumn(14).getInt64();
        }
        return out;
      });
}

Status SqliteStore::UpdateAutomation(const AutomationRecord& a, int64_t expected_version) {
  return Guard("updating automation", [&]() -> Status {
    SQLite::Statement q(db_,
                        "UPDATE automations SET enabled = ?, paused_reason = ?, "
                        "consecutive_failures = ?, next_due_at = ?, updated_at = ?, version = ? "
                        "WHERE id = ? AND version = ?");
    q.bind(1, a.enabled ? 1 : 0);
    q.bind(2, a.paused_reason);
    q.bind(3, a.consecutive_failures);
    q.bind(4, a.next_due_at);
    q.bind(5, a.updated_at);
    q.bind(6, expected_version + 1);
    q.bind(7, a.id);
    q.bind(8, expected_version);
    if (q.exec() == 1) return Status::Ok();
    RETURN_IF_ERROR(GetAutomationLocked("", a.id).status());
    return Conflict("automation '" + a.id + "' changed since version " +
                    std::to_string(expected_version) + " was read");
  });
}

Status SqliteStore::DeleteAutomation(const std::string& org_id, const std::string& id) {
  return Guard("deleting automation", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM automations WHERE id = ? AND org_id = ?");
    q.bind(1, id);
    q.bind(2, org_id);
    if (q.exec() == 0) return NotFound("automation '" + id + "' not found");
    return Status::Ok();
  });
}

Result<std::optional<int64_t>> SqliteStore::NextAutomationDue() {
  return Guard<Result<std::optional<int64_t>>>(
      "reading the next automation due", [&]() -> Result<std::optional<int64_t>> {
        SQLite::Statement q(db_, "SELECT MIN(next_due_at) FROM automations WHERE enabled = 1");
        if (!q.executeStep() || q.getColumn(0).isNull()) return std::optional<int64_t>();
        return std::optional<int64_t>(q.getColumn(0).getInt64());
      });
}

Result<std::vector<AutomationRecord>> SqliteStore::ListDueAutomations(int64_t now, int limit) {
  return Guard<Result<std::vector<AutomationRecord>>>(
      "listing due automations", [&]() -> Result<std::vector<AutomationRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kAutomationColumns +
                                     " FROM automations WHERE enabled = 1 AND next_due_at <= ? "
                                     "ORDER BY next_due_at LIMIT ?");
        q.bind(1, now);
        q.bind(2, limit);
        std::vector<AutomationRecord> out;
        while (q.executeStep()) out.push_back(ReadAutomation(q));
        return out;
      });
}

std::vector<Status> SqliteStore::ClaimAutomationSlots(const std::vector<SlotClaim>& claims) {
  std::vector<Status> out(claims.size());
  std::vector<std::string> changed;
  Status written = Guard("claiming automations' slots", [&]() -> Status {
    StoreTransaction tx(db_);
    for (size_t i = 0; i < claims.size(); ++i) {
      // A claim that fails part-way is undone alone; the pass's other claims stand.
      db_.exec("SAVEPOINT claim");
      size_t announced = changed.size();
      try {
        out[i] = ClaimSlotLocked(claims[i], changed);
      } catch (const std::exception& e) {
        out[i] =
            Internal("claiming automation '" + claims[i].automation_id + "' slot: " + e.what());
      }
      if (!out[i].ok()) {
        db_.exec("ROLLBACK TO claim");
        changed.resize(announced);
      }
      db_.exec("RELEASE claim");
    }
    tx.commit();
    return Status::Ok();
  });
  if (!written.ok()) return std::vector<Status>(claims.size(), written);
  for (const auto& run_id : changed) AnnounceRunEvent(run_id);
  return out;
}

// Checks before it writes, so that a refused claim leaves nothing behind in the transaction.
Status SqliteStore::ClaimSlotLocked(const SlotClaim& c, std::vector<std::string>& changed) {
  const std::string& id = c.automation_id;
  for (const auto& r : c.runs) {
    SQLite::Statement taken(db_,
                            "SELECT 1 FROM runs WHERE automation_id = ? AND scheduled_at = ? "
                            "AND trigger IN ('schedule', 'catch_up')");
    taken.bind(1, r.automation_id);
    taken.bind(2, r.scheduled_at);
    if (taken.executeStep()) return Conflict("automation '" + id + "' slot already fired");
  }
  SQLite::Statement q(db_,
                      "UPDATE automations SET next_due_at = ? WHERE id = ? AND enabled = 1 AND "
                      "next_due_at = ?");
  q.bind(1, c.next_due);
  q.bind(2, id);
  q.bind(3, c.expected_due);
  if (q.exec() != 1) return Conflict("automation '" + id + "' slot was claimed or paused");
  for (const auto& r : c.runs) {
    if (UpsertRun(db_, r)) changed.push_back(r.id);
  }
  if (c.keep_runs > 0) PruneOwnerRunsLocked("", id, c.keep_runs);
  return Status::Ok();
}

Result<AutomationRecord> SqliteStore::RecordAutomationOutcome(const std::string& id, bool failed,
                                                              int pause_after,
                                                              const std::string& reason,
                                                              int64_t now) {
  return Guard<Result<AutomationRecord>>(
      "recording an automation's run", [&]() -> Result<AutomationRecord> {
        StoreTransaction tx(db_);
        ASSIGN_OR_RETURN(AutomationRecord a, GetAutomationLocked("", id));
        // A success after a success changes nothing: no write, so no sync, for most runs.
        if (!failed && a.consecutive_failures == 0) return a;
        a.consecutive_failures = failed ? a.consecutive_failures + 1 : 0;
        bool pause = failed && a.enabled && a.consecutive_failures >= pause_after;
        SQLite::Statement q(db_,
                            "UPDATE automations SET consecutive_failures = ?, enabled = ?, "
                            "paused_reason = ?, version = ?, updated_at = ? WHERE id = ?");
        q.bind(1, a.consecutive_failures);
        q.bind(2, pause ? 0 : (a.enabled ? 1 : 0));
        q.bind(3, pause ? reason : a.paused_reason);
        q.bind(4, pause ? a.version + 1 : a.version);
        q.bind(5, pause ? now : a.updated_at);
        q.bind(6, id);
        q.exec();
        ASSIGN_OR_RETURN(AutomationRecord after, GetAutomationLocked("", id));
        tx.commit();
        return after;
      });
}

Result<int> SqliteStore::PauseAutomationsOfSandbox(const std::string& sandbox_id,
                                                   const std::string& reason, int64_t now) {
  return Guard<Result<int>>("pausing the sandbox's automations", [&]() -> Result<int> {
    SQLite::Statement q(db_,
                        "UPDATE automations SET enabled = 0, paused_reason = ?, "
                        "version = version + 1, updated_at = ? WHERE sandbox_id = ? AND "
                        "enabled = 1");
    q.bind(1, reason);
    q.bind(2, now);
    q.bind(3, sandbox_id);
    return q.exec();
  });
}

Result<int> SqliteStore::FollowReplacedSandbox(const std::string& from, const std::string& to,
                                               int64_t now) {
  return Guard<Result<int>>("moving automations to the replacing sandbox", [&]() -> Result<int> {
    SQLite::Statement q(db_,
                        "UPDATE automations SET sandbox_id = ?, version = version + 1, "
                        "updated_at = ? WHERE sandbox_id = ?");
    q.bind(1, to);
    q.bind(2, now);
    q.bind(3, from);
    return q.exec();
  });
}

Result<std::vector<AutomationRecord>> SqliteStore::ListAutomationsOfSandbox(
    const std::string& sandbox_id) {
  return Guard<Result<std::vector<AutomationRecord>>>(
      "listing the sandbox's automations", [&]() -> Result<std::vector<AutomationRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kAutomationColumns +
                                     " FROM automations WHERE sandbox_id = ? ORDER BY seq");
        q.bind(1, sandbox_id);
        std::vector<AutomationRecord> out;
        while (q.executeStep()) out.push_back(ReadAutomation(q));
        return out;
      });
}

Result<int> SqliteStore::MakeControllersDue(int64_t now) {
  return Guard<Result<int>>("making controllers due", [&]() -> Result<int> {
    SQLite::Statement q(db_,
                        "UPDATE automations SET next_due_at = ? WHERE kind = 'controller' AND "
                        "enabled = 1");
    q.bind(1, now);
    return q.exec();
  });
}

}  // namespace adapt::store
