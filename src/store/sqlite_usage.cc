// SqliteStore: metering's marks, usage sums, account alerts and counts (usage_store.h).
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

// An alert's event (AlertEvent), inside the caller's transaction.
void InsertAlertEvent(SQLite::Database& db, const EventRecord& e) {
  SQLite::Statement q(db,
                      "INSERT INTO events(org_id, sandbox_id, status, at, alert, alert_limit, "
                      "alert_value, alert_used) VALUES (?,'',?,?,1,?,?,?)");
  q.bind(1, e.org_id);
  q.bind(2, e.status);
  q.bind(3, e.at);
  q.bind(4, e.alert_limit);
  q.bind(5, e.alert_value);
  q.bind(6, e.alert_used);
  q.exec();
}

}  // namespace

Result<int64_t> SqliteStore::MeteredUntil(const std::string& subject_id) {
  return Guard<Result<int64_t>>("reading the meter", [&]() -> Result<int64_t> {
    SQLite::Statement q(db_,
                        "SELECT COALESCE(MAX(period_end), 0) FROM ledger WHERE subject_id = ? "
                        "AND kind = 'usage'");
    q.bind(1, subject_id);
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

Result<int64_t> SqliteStore::MeterThrough() {
  return Guard<Result<int64_t>>("reading the meter", [&]() -> Result<int64_t> {
    SQLite::Statement q(db_, "SELECT through FROM meter_state WHERE id = 1");
    if (!q.executeStep()) return int64_t{0};
    return q.getColumn(0).getInt64();
  });
}

Status SqliteStore::SetMeterThrough(int64_t at) {
  return Guard("saving the meter", [&]() -> Status {
    SQLite::Statement q(db_, "INSERT OR REPLACE INTO meter_state(id, through) VALUES (1, ?)");
    q.bind(1, at);
    q.exec();
    return Status::Ok();
  });
}

Result<std::vector<SandboxRecord>> SqliteStore::SandboxesToMeter(int64_t since) {
  return Guard<Result<std::vector<SandboxRecord>>>(
      "listing sandboxes to meter", [&]() -> Result<std::vector<SandboxRecord>> {
        StoreTransaction tx(db_);
        SQLite::Statement q(db_,
                            "SELECT id FROM sandboxes WHERE status IN ('provisioning', 'running') "
                            "UNION SELECT sandbox_id FROM events WHERE at >= ?");
        q.bind(1, since);
        std::vector<std::string> ids;
        while (q.executeStep()) ids.push_back(q.getColumn(0).getString());
        std::vector<SandboxRecord> out;
        for (const auto& id : ids) {
          auto r = GetLocked("", id);
          if (r.ok()) out.push_back(std::move(*r));
        }
        tx.commit();
        return out;
      });
}

Result<std::vector<EventRecord>> SqliteStore::SandboxEvents(const std::string& sandbox_id) {
  return Guard<Result<std::vector<EventRecord>>>(
      "listing events", [&]() -> Result<std::vector<EventRecord>> {
        SQLite::Statement q(db_,
                            "SELECT seq, org_id, sandbox_id, status, at FROM events "
                            "WHERE sandbox_id = ? ORDER BY seq");
        q.bind(1, sandbox_id);
        std::vector<EventRecord> out;
        while (q.executeStep())
          out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                         q.getColumn(2).getString(), q.getColumn(3).getString(),
                         q.getColumn(4).getInt64()});
        return out;
      });
}

Result<LedgerTotalsRecord> SqliteStore::LedgerTotals(const std::string& org_id, int64_t now) {
  return Guard<Result<LedgerTotalsRecord>>(
      "reading the ledger", [&]() -> Result<LedgerTotalsRecord> {
        // The kept totals (migration 41) and the credits that expire later than `now`, the
        // only entries summed here (by their partial index): each read costs the same
        // however long the ledger has grown. Both read under the store's lock.
        LedgerTotalsRecord out;
        SQLite::Statement kept(
            db_, "SELECT usage_nanos, lasting_credits_nanos FROM ledger_totals WHERE org_id = ?");
        kept.bind(1, org_id);
        if (kept.executeStep()) {
          out.usage_nanos = kept.getColumn(0).getInt64();
          out.credits_nanos = kept.getColumn(1).getInt64();
        }
        SQLite::Statement expiring(db_,
                                   "SELECT COALESCE(SUM(amount_nanos), 0) FROM ledger WHERE "
                                   "org_id = ? AND kind = 'credit' AND expires_at IS NOT NULL "
                                   "AND expires_at > ?");
        expiring.bind(1, org_id);
        expiring.bind(2, now);
        expiring.executeStep();
        out.credits_nanos += expiring.getColumn(0).getInt64();
        return out;
      });
}

Result<std::vector<UsageTotalRecord>> SqliteStore::UsageBetween(const std::string& org_id,
                                                                int64_t from, int64_t to) {
  return Guard<Result<std::vector<UsageTotalRecord>>>(
      "summing usage", [&]() -> Result<std::vector<UsageTotalRecord>> {
        SQLite::Statement q(
            db_,
            "SELECT l.subject_kind, l.subject_id, COALESCE((SELECT r.job_id FROM runs r WHERE "
            "r.sandbox_id = l.subject_id AND r.org_id = l.org_id LIMIT 1), ''), "
            "SUM(l.cpu_millis), SUM(l.memory_mib_millis), SUM(l.storage_mib_millis), "
            "SUM(l.amount_nanos), COUNT(*), COALESCE((SELECT r.id FROM runs r WHERE "
            "r.sandbox_id = l.subject_id AND r.org_id = l.org_id AND r.job_id != '' LIMIT 1), "
            "''), SUM(l.gpu_millis) FROM ledger l WHERE l.org_id = ? AND l.kind = "
            "'usage' AND l.period_start >= ? AND l.period_start < ? GROUP BY l.subject_kind, "
            "l.subject_id ORDER BY MIN(l.seq)");
        q.bind(1, org_id);
        q.bind(2, from);
        q.bind(3, to);
        std::vector<UsageTotalRecord> out;
        while (q.executeStep()) {
          UsageTotalRecord u;
          u.subject_kind = q.getColumn(0).getString();
          u.subject_id = q.getColumn(1).getString();
          u.job_id = q.getColumn(2).getString();
          u.cpu_millis = q.getColumn(3).getInt64();
          u.memory_mib_millis = q.getColumn(4).getInt64();
          u.storage_mib_millis = q.getColumn(5).getInt64();
          u.amount_nanos = q.getColumn(6).getInt64();
          u.entries = q.getColumn(7).getInt64();
          u.run_id = q.getColumn(8).getString();
          u.gpu_millis = q.getColumn(9).getInt64();
          out.push_back(std::move(u));
        }
        return out;
      });
}

Result<UsageTotalRecord> SqliteStore::UsageOfSubject(const std::string& org_id,
                                                     const std::string& subject_id) {
  return Guard<Result<UsageTotalRecord>>("summing usage", [&]() -> Result<UsageTotalRecord> {
    SQLite::Statement q(db_,
                        "SELECT COALESCE(MAX(subject_kind), ''), COALESCE(SUM(cpu_millis), 0), "
                        "COALESCE(SUM(memory_mib_millis), 0), COALESCE(SUM(storage_mib_millis), "
                        "0), COALESCE(SUM(gpu_millis), 0), COALESCE(SUM(amount_nanos), 0), "
                        "COUNT(*) FROM ledger WHERE org_id = ? AND subject_id = ? AND kind = "
                        "'usage'");
    q.bind(1, org_id);
    q.bind(2, subject_id);
    q.executeStep();
    UsageTotalRecord u;
    u.subject_kind = q.getColumn(0).getString();
    u.subject_id = subject_id;
    u.cpu_millis = q.getColumn(1).getInt64();
    u.memory_mib_millis = q.getColumn(2).getInt64();
    u.storage_mib_millis = q.getColumn(3).getInt64();
    u.gpu_millis = q.getColumn(4).getInt64();
    u.amount_nanos = q.getColumn(5).getInt64();
    u.entries = q.getColumn(6).getInt64();
    return u;
  });
}

Result<bool> SqliteStore::RecordAccountAlert(const AccountAlertRecord& a) {
  return Guard<Result<bool>>("recording an account alert", [&]() -> Result<bool> {
    StoreTransaction tx(db_);
    SQLite::Statement q(db_,
                        "INSERT OR IGNORE INTO account_alerts(org_id, kind, credits_nanos, "
                        "usage_nanos, at) VALUES (?,?,?,?,?)");
    q.bind(1, a.org_id);
    q.bind(2, a.kind);
    q.bind(3, a.credits_nanos);
    q.bind(4, a.usage_nanos);
    q.bind(5, a.at);
    if (q.exec() == 0) return false;
    InsertAlertEvent(db_, AlertEvent(a));
    tx.commit();
    return true;
  });
}

Result<std::vector<AccountAlertRecord>> SqliteStore::ListAccountAlerts(const std::string& org_id,
                                                                       int limit) {
  return Guard<Result<std::vector<AccountAlertRecord>>>(
      "listing account alerts", [&]() -> Result<std::vector<AccountAlertRecord>> {
        SQLite::Statement q(db_,
                            "SELECT seq, org_id, kind, credits_nanos, usage_nanos, at FROM "
                            "account_alerts WHERE org_id = ? ORDER BY seq DESC LIMIT ?");
        q.bind(1, org_id);
        q.bind(2, limit);
        std::vector<AccountAlertRecord> out;
        while (q.executeStep())
          out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                         q.getColumn(2).getString(), q.getColumn(3).getInt64(),
                         q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
        return out;
      });
}

Result<std::vector<LimitAlertRecord>> SqliteStore::ObserveLimits(
    const std::string& org_id, const std::vector<LimitAlertRecord>& observed) {
  using Alerts = std::vector<LimitAlertRecord>;
  return Guard<Result<Alerts>>("recording limit alerts", [&]() -> Result<Alerts> {
    StoreTransaction tx(db_);
    Alerts recorded;
    for (LimitAlertRecord a : observed) {
      if (!LimitReached(a)) {
        SQLite::Statement under(
            db_, "DELETE FROM limits_reached WHERE org_id = ? AND limit_name = ? AND percent = ?");
        under.bind(1, org_id);
        under.bind(2, a.limit);
        under.bind(3, a.percent);
        under.exec();
        continue;
      }
      SQLite::Statement reached(db_,
                                "INSERT OR IGNORE INTO limits_reached(org_id, limit_name, "
                                "percent) VALUES (?,?,?)");
      reached.bind(1, org_id);
      reached.bind(2, a.limit);
      reached.bind(3, a.percent);
      if (reached.exec() == 0) continue;  // reached already at the last observation
      SQLite::Statement q(db_,
                          "INSERT INTO limit_alerts(org_id, limit_name, percent, limit_value, "
                          "used, at) VALUES (?,?,?,?,?,?)");
      q.bind(1, org_id);
      q.bind(2, a.limit);
      q.bind(3, a.percent);
      q.bind(4, a.limit_value);
      q.bind(5, a.used);
      q.bind(6, a.at);
      q.exec();
      a.org_id = org_id;
      a.seq = db_.getLastInsertRowid();
      InsertAlertEvent(db_, AlertEvent(a));
      recorded.push_back(a);
    }
    tx.commit();
    return recorded;
  });
}

Result<std::vector<LimitAlertRecord>> SqliteStore::ListLimitAlerts(const std::string& org_id,
                                                                   int limit) {
  using Alerts = std::vector<LimitAlertRecord>;
  return Guard<Result<Alerts>>("listing limit alerts", [&]() -> Result<Alerts> {
    SQLite::Statement q(db_,
                        "SELECT seq, org_id, limit_name, percent, limit_value, used, at FROM "
                        "limit_alerts WHERE org_id = ? ORDER BY seq DESC LIMIT ?");
    q.bind(1, org_id);
    q.bind(2, limit);
    Alerts out;
    while (q.executeStep())
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                     q.getColumn(2).getString(), q.getColumn(3).getInt(), q.getColumn(4).getInt64(),
                     q.getColumn(5).getInt64(), q.getColumn(6).getInt64()});
    return out;
  });
}

Result<std::map<std::pair<std::string, std::string>, int64_t>>
SqliteStore::CountSandboxesByStatus() {
  using Counts = std::map<std::pair<std::string, std::string>, int64_t>;
  return Guard<Result<Counts>>("counting sandboxes", [&]() -> Result<Counts> {
    SQLite::Statement q(db_,
                        "SELECT org_id, status, COUNT(*) FROM sandboxes WHERE status != "
                        "'deleted' GROUP BY org_id, status");
    Counts out;
    while (q.executeStep())
      out[{q.getColumn(0).getString(), q.getColumn(1).getString()}] = q.getColumn(2).getInt64();
    return out;
  });
}

}  // namespace adapt::store
