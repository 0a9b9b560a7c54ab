// SqliteStore: plans, billing accounts and the ledger (account_store.h).
#include "store/sandbox_config_codec.h"
#include "store/sandbox_limit_check.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kPlanColumns =
    "id, name, concurrent_sandboxes, cpu, memory_mib, max_run_seconds, persistent_storage_gib, "
    "object_storage_gib, gpus, automations, queued_jobs, endpoints, cpu_second_nanos, "
    "memory_gib_second_nanos, storage_gib_month_nanos, gpu_second_nanos, updated_at, database_mib, "
    "database_connections, app_replicas";
constexpr const char* kLedgerColumns =
    "id, org_id, kind, amount_nanos, reason, expires_at, created_at, subject_kind, subject_id, "
    "period_start, period_end, cpu_millis, memory_mib_millis, storage_mib_millis, gpu_millis";

std::optional<int64_t> LimitColumn(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

void BindLimit(SQLite::Statement& q, int index, const std::optional<int64_t>& v) {
  if (v)
    q.bind(index, *v);
  else
    q.bind(index);
}

PlanRecord ReadPlan(SQLite::Statement& q) {
  PlanRecord p;
  p.id = q.getColumn(0).getString();
  p.name = q.getColumn(1).getString();
  p.concurrent_sandboxes = LimitColumn(q.getColumn(2));
  p.cpu = LimitColumn(q.getColumn(3));
  p.memory_mib = LimitColumn(q.getColumn(4));
  p.max_run_seconds = LimitColumn(q.getColumn(5));
  p.persistent_storage_gib = LimitColumn(q.getColumn(6));
  p.object_storage_gib = LimitColumn(q.getColumn(7));
  p.gpus = LimitColumn(q.getColumn(8));
  p.automations = LimitColumn(q.getColumn(9));
  p.queued_jobs = LimitColumn(q.getColumn(10));
  p.endpoints = LimitColumn(q.getColumn(11));
  p.cpu_second_nanos = q.getColumn(12).getInt64();
  p.memory_gib_second_nanos = q.getColumn(13).getInt64();
  p.storage_gib_month_nanos = q.getColumn(14).getInt64();
  p.gpu_second_nanos = q.getColumn(15).getInt64();
  p.updated_at = q.getColumn(16).getInt64();
  p.database_mib = LimitColumn(q.getColumn(17));
  p.database_connections = LimitColumn(q.getColumn(18));
  p.app_replicas = LimitColumn(q.getColumn(19));
  return p;
}

void BindPlan(SQLite::Statement& q, const PlanRecord& p) {
  q.bind(1, p.id);
  q.bind(2, p.name);
  BindLimit(q, 3, p.concurrent_sandboxes);
  BindLimit(q, 4, p.cpu);
  BindLimit(q, 5, p.memory_mib);
  BindLimit(q, 6, p.max_run_seconds);
  BindLimit(q, 7, p.persistent_storage_gib);
  BindLimit(q, 8, p.object_storage_gib);
  BindLimit(q, 9, p.gpus);
  BindLimit(q, 10, p.automations);
  BindLimit(q, 11, p.queued_jobs);
  BindLimit(q, 12, p.endpoints);
  q.bind(13, p.cpu_second_nanos);
  q.bind(14, p.memory_gib_second_nanos);
  q.bind(15, p.storage_gib_month_nanos);
  q.bind(16, p.gpu_second_nanos);
  q.bind(17, p.updated_at);
  BindLimit(q, 18, p.database_mib);
  BindLimit(q, 19, p.database_connections);
  BindLimit(q, 20, p.app_replicas);
}

LedgerEntryRecord ReadLedgerEntry(SQLite::Statement& q) {
  LedgerEntryRecord e;
  e.id = q.getColumn(0).getString();
  e.org_id = q.getColumn(1).getString();
  e.kind = q.getColumn(2).getString();
  e.amount_nanos = q.getColumn(3).getInt64();
  e.reason = q.getColumn(4).getString();
  e.expires_at = LimitColumn(q.getColumn(5));
  e.created_at = q.getColumn(6).getInt64();
  e.subject_kind = q.getColumn(7).getString();
  e.subject_id = q.getColumn(8).getString();
  e.period_start = q.getColumn(9).getInt64();
  e.period_end = q.getColumn(10).getInt64();
  e.cpu_millis = q.getColumn(11).getInt64();
  e.memory_mib_millis = q.getColumn(12).getInt64();
  e.storage_mib_millis = q.getColumn(13).getInt64();
  e.gpu_millis = q.getColumn(14).getInt64();
  return e;
}

bool OrgExists(SQLite::Database& db, const std::string& org_id) {
  SQLite::Statement q(db, "SELECT 1 FROM orgs WHERE id = ?");
  q.bind(1, org_id);
  return q.executeStep();
}

bool PlanExists(SQLite::Database& db, const std::string& plan_id) {
  SQLite::Statement q(db, "SELECT 1 FROM plans WHERE id = ?");
  q.bind(1, plan_id);
  return q.executeStep();
}

}  // namespace

Status SqliteStore::PutPlan(const PlanRecord& plan) {
  return Guard("saving plan", [&]() -> Status {
    SQLite::Statement q(db_, std::string("INSERT OR REPLACE INTO plans(") + kPlanColumns +
                                 ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    BindPlan(q, plan);
    q.exec();
    return Status::Ok();
  });
}

Result<bool> SqliteStore::InsertPlanIfAbsent(const PlanRecord& plan) {
  return Guard<Result<bool>>("saving plan", [&]() -> Result<bool> {
    SQLite::Statement q(db_, std::string("INSERT OR IGNORE INTO plans(") + kPlanColumns +
                                 ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    BindPlan(q, plan);
    return q.exec() > 0;
  });
}

Result<PlanRecord> SqliteStore::GetPlan(const std::string& id) {
  return Guard<Result<PlanRecord>>("reading plan", [&]() -> Result<PlanRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kPlanColumns + " FROM plans WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return NotFound("plan '" + id + "' not found");
    return ReadPlan(q);
  });
}

Result<std::vector<PlanRecord>> SqliteStore::ListPlans() {
  return Guard<Result<std::vector<PlanRecord>>>(
      "listing plans", [&]() -> Result<std::vector<PlanRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kPlanColumns + " FROM plans ORDER BY id");
        std::vector<PlanRecord> out;
        while (q.executeStep()) out.push_back(ReadPlan(q));
        return out;
      });
}

Result<BillingAccountRecord> SqliteStore::GetBillingAccount(const std::string& org_id) {
  return Guard<Result<BillingAccountRecord>>(
      "reading billing account", [&]() -> Result<BillingAccountRecord> {
        SQLite::Statement q(db_,
                            "SELECT org_id, plan_id, terms_version, registered_at "
                            "FROM billing_accounts WHERE org_id = ?");
        q.bind(1, org_id);
        if (!q.executeStep()) return NotFound("organization " + org_id + " has no account");
        return BillingAccountRecord{q.getColumn(0).getString(), q.getColumn(1).getString(),
                                    q.getColumn(2).getString(), q.getColumn(3).getInt64()};
      });
}

Result<BillingAccountRecord> SqliteStore::EnsureBillingAccount(const BillingAccountRecord& a) {
  {
    auto tx_status = Guard("creating billing account", [&]() -> Status {
      StoreTransaction tx(db_);
      if (!OrgExists(db_, a.org_id)) return NotFound("organization " + a.org_id + " not found");
      if (!PlanExists(db_, a.plan_id)) return NotFound("plan '" + a.plan_id + "' not found");
      SQLite::Statement q(db_,
                          "INSERT OR IGNORE INTO billing_accounts(org_id, plan_id, terms_version, "
                          "registered_at) VALUES (?,?,?,?)");
      q.bind(1, a.org_id);
      q.bind(2, a.plan_id);
      q.bind(3, a.terms_version);
      q.bind(4, a.registered_at);
      q.exec();
      SQLite::Statement mark(db_, "UPDATE orgs SET registered = 1 WHERE id = ?");
      mark.bind(1, a.org_id);
      mark.exec();
      tx.commit();
      return Status::Ok();
    });
    if (!tx_status.ok()) return tx_status;
  }
  return GetBillingAccount(a.org_id);
}

Status SqliteStore::SetAccountPlan(const std::string& org_id, const std::string& plan_id) {
  return Guard("setting plan", [&]() -> Status {
    StoreTransaction tx(db_);
    if (!PlanExists(db_, plan_id)) return NotFound("plan '" + plan_id + "' not found");
    SQLite::Statement q(db_, "UPDATE billing_accounts SET plan_id = ? WHERE org_id = ?");
    q.bind(1, plan_id);
    q.bind(2, org_id);
    if (q.exec() == 0) return NotFound("organization " + org_id + " has no account");
    tx.commit();
    return Status::Ok();
  });
}

Result<LedgerEntryRecord> SqliteStore::AppendLedgerEntry(const LedgerEntryRecord& e) {
  return Guard<Result<LedgerEntryRecord>>(
      "appending to the ledger", [&]() -> Result<LedgerEntryRecord> {
        StoreTransaction tx(db_);
        SQLite::Statement prior(
            db_, std::string("SELECT ") + kLedgerColumns + " FROM ledger WHERE id = ?");
        prior.bind(1, e.id);
        if (prior.executeStep()) {
          LedgerEntryRecord earlier = ReadLedgerEntry(prior);
          if (earlier.org_id != e.org_id || earlier.kind != e.kind ||
              earlier.amount_nanos != e.amount_nanos)
            return Conflict("ledger entry " + e.id + " was already recorded with other values");
          return earlier;
        }
        if (!OrgExists(db_, e.org_id)) return NotFound("organization " + e.org_id + " not found");
        SQLite::Statement q(db_, std::string("INSERT INTO ledger(") + kLedgerColumns +
                                     ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
        q.bind(1, e.id);
        q.bind(2, e.org_id);
        q.bind(3, e.kind);
        q.bind(4, e.amount_nanos);
        q.bind(5, e.reason);
        BindLimit(q, 6, e.expires_at);
        q.bind(7, e.created_at);
        q.bind(8, e.subject_kind);
        q.bind(9, e.subject_id);
        q.bind(10, e.period_start);
        q.bind(11, e.period_end);
        q.bind(12, e.cpu_millis);
        q.bind(13, e.memory_mib_millis);
        q.bind(14, e.storage_mib_millis);
        q.bind(15, e.gpu_millis);
        q.exec();
        // The totals LedgerTotals reads (migration 41), in the same transaction.
        const bool credit = e.kind == "credit";
        SQLite::Statement totals(
            db_,
            "INSERT INTO ledger_totals(org_id, usage_nanos, lasting_credits_nanos) VALUES (?,?,?) "
            "ON CONFLICT(org_id) DO UPDATE SET usage_nanos = usage_nanos + excluded.usage_nanos, "
            "lasting_credits_nanos = lasting_credits_nanos + excluded.lasting_credits_nanos");
        totals.bind(1, e.org_id);
        totals.bind(2, credit ? int64_t{0} : e.amount_nanos);
        totals.bind(3, credit && !e.expires_at ? e.amount_nanos : int64_t{0});
        totals.exec();
        tx.commit();
        return e;
      });
}

Result<std::vector<LedgerEntryRecord>> SqliteStore::ListLedger(const std::string& org_id,
                                                               std::optional<int64_t> after_seq,
                                                               int64_t limit) {
  return Guard<Result<std::vector<LedgerEntryRecord>>>(
      "reading the ledger", [&]() -> Result<std::vector<LedgerEntryRecord>> {
        SQLite::Statement q(db_, std::string("SELECT ") + kLedgerColumns +
                                     ", seq FROM ledger WHERE org_id = ? AND seq > ? "
                                     "ORDER BY seq LIMIT ?");
        q.bind(1, org_id);
        q.bind(2, after_seq.value_or(0));
        q.bind(3, limit > 0 ? limit : int64_t{-1});
        std::vector<LedgerEntryRecord> out;
        while (q.executeStep()) {
          out.push_back(ReadLedgerEntry(q));
          out.back().seq = q.getColumn(15).getInt64();
        }
        return out;
      });
}

Result<int64_t> SqliteStore::Balance(const std::string& org_id, int64_t now) {
  ASSIGN_OR_RETURN(LedgerTotalsRecord totals, LedgerTotals(org_id, now));
  return totals.credits_nanos - totals.usage_nanos;
}

Result<OrgUsageRecord> SqliteStore::GetOrgUsage(const std::string& org_id) {
  return Guard<Result<OrgUsageRecord>>("reading usage", [&]() -> Result<OrgUsageRecord> {
    StoreTransaction tx(db_);
    OrgUsageRecord u;
    SQLite::Statement s(db_,
                        "SELECT status, config FROM sandboxes WHERE org_id = ? AND "
                        "status NOT IN ('deleting', 'deleted', 'failed')");
    s.bind(1, org_id);
    while (s.executeStep()) {
      ++u.sandboxes;
      if (!UsesCompute(s.getColumn(0).getString())) continue;
      ++u.running_sandboxes;
      SandboxConfig c = DecodeSandboxConfig(s.getColumn(1).getString());
      u.cpu += c.cpu;
      u.memory_mib += c.memory_mib;
    }
    auto sum = [&](const char* sql) {
      SQLite::Statement q(db_, sql);
      q.bind(1, org_id);
      q.executeStep();
      return q.getColumn(0).getInt64();
    };
    u.persistent_storage_mib =
        sum("SELECT COALESCE(SUM(size_mib), 0) FROM volumes WHERE org_id = ?");
    u.object_storage_bytes = sum(kStoredBytesQuery);  // releases count against it too
    u.endpoints = sum("SELECT COUNT(*) FROM endpoints WHERE org_id = ?");
    u.queued_jobs = sum("SELECT COUNT(*) FROM jobs WHERE org_id = ? AND status = 'queued'");
    u.automations = sum("SELECT COUNT(*) FROM automations WHERE org_id = ?");
    tx.commit();
    return u;
  });
}

}  // namespace adapt::store
