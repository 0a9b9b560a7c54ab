// SqliteStore: one-shot jobs and runs (issue 18). A job's template is one JSON column (only
// this file reads or writes it); its env is sealed as a sandbox's is (sandbox_env_column.h).
#include <nlohmann/json.hpp>

#include "store/sandbox_env_column.h"
#include "store/sandbox_limit_check.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

constexpr const char* kJobColumns =
    "seq, id, org_id, status, spec, env, max_attempts, attempts, last_run_id, exit_code, error, "
    "idempotency_key, fingerprint, created_at, updated_at, finished_at";
constexpr const char* kRunColumns =
    "seq, id, org_id, job_id, automation_id, trigger, attempt, sandbox_id, command_id, status, "
    "exit_code, error, stdout_text, stderr_text, stdout_truncated, stderr_truncated, "
    "scheduled_at, started_at, ended_at, created_at";

std::string EncodeSpec(const JobTemplate& t) {
  nlohmann::json j = {
      {"image", t.image},      {"cpu", t.cpu},       {"memoryMiB", t.memory_mib},
      {"diskMiB", t.disk_mib}, {"egress", t.egress}, {"secrets", t.secrets},
      {"argv", t.argv},        {"cwd", t.cwd},       {"timeoutSeconds", t.timeout_seconds}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Throws (turned into a Status by Guard) on a column this file did not write.
JobTemplate DecodeSpec(const std::string& text) {
  auto j = nlohmann::json::parse(text);
  JobTemplate t;
  t.image = j.at("image").get<std::string>();
  t.cpu = j.at("cpu").get<int64_t>();
  t.memory_mib = j.at("memoryMiB").get<int64_t>();
  t.disk_mib = j.at("diskMiB").get<int64_t>();
  t.egress = j.at("egress").get<std::string>();
  t.secrets = j.at("secrets").get<std::vector<std::string>>();
  t.argv = j.at("argv").get<std::vector<std::string>>();
  t.cwd = j.at("cwd").get<std::string>();
  t.timeout_seconds = j.at("timeoutSeconds").get<int>();
  return t;
}

std::optional<int> NullableInt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt();
}

void BindNullableInt(SQLite::Statement& q, int index, const std::optional<int>& v) {
  if (v) {
    q.bind(index, *v);
  } else {
    q.bind(index);
  }
}

RunRecord ReadRun(SQLite::Statement& q) {
  RunRecord r;
  r.seq = q.getColumn(0).getInt64();
  r.id = q.getColumn(1).getString();
  r.org_id = q.getColumn(2).getString();
  r.job_id = q.getColumn(3).getString();
  r.automation_id = q.getColumn(4).getString();
  r.trigger = q.getColumn(5).getString();
  r.attempt = q.getColumn(6).getInt();
  r.sandbox_id = q.getColumn(7).getString();
  r.command_id = q.getColumn(8).getString();
  r.status = q.getColumn(9).getString();
  r.exit_code = NullableInt(q.getColumn(10));
  r.error = q.getColumn(11).getString();
  r.stdout_text = q.getColumn(12).getString();
  r.stderr_text = q.getColumn(13).getString();
  r.stdout_truncated = q.getColumn(14).getInt() != 0;
  r.stderr_truncated = q.getColumn(15).getInt() != 0;
  r.scheduled_at = q.getColumn(16).getInt64();
  r.started_at = q.getColumn(17).getInt64();
  r.ended_at = q.getColumn(18).getInt64();
  r.created_at = q.getColumn(19).getInt64();
  return r;
}

std::string InList(size_t n) {
  std::string out = "(";
  for (size_t i = 0; i < n; ++i) out += i ? ",?" : "?";
  return out + ")";
}

}  // namespace

JobRecord SqliteStore::ReadJob(SQLite::Statement& q) {
  JobRecord r;
  r.seq = q.getColumn(0).getInt64();
  r.id = q.getColumn(1).getString();
  r.org_id = q.getColumn(2).getString();
  r.status = q.getColumn(3).getString();
  r.spec = DecodeSpec(q.getColumn(4).getString());
  auto env = DecodeEnvColumn(sealer_, r.org_id, r.id, q.getColumn(5).getString());
  if (!env.ok()) throw std::runtime_error(env.status().message());
  r.spec.env = std::move(*env);
  r.max_attempts = q.getColumn(6).getInt();
  r.attempts = q.getColumn(7).getInt();
  r.last_run_id = q.getColumn(8).getString();
  r.exit_code = NullableInt(q.getColumn(9));
  r.error = q.getColumn(10).getString();
  r.idempotency_key = q.getColumn(11).isNull() ? "" : q.getColumn(11).getString();
  r.fingerprint = q.getColumn(12).getString();
  r.created_at = q.getColumn(13).getInt64();
  r.updated_at = q.getColumn(14).getInt64();
  r.finished_at = q.getColumn(15).getInt64();
  return r;
}

Result<JobRecord> SqliteStore::GetJobLocked(const std::string& org_id, const std::string& id) {
  SQLite::Statement q(db_, std::string("SELECT ") + kJobColumns +
                               " FROM jobs WHERE id = ? AND (? = '' OR org_id = ?)");
  q.bind(1, id);
  q.bind(2, org_id);
  q.bind(3, org_id);
  if (!q.executeStep()) return NotFound("job '" + id + "' not found");
  return ReadJob(q);
}

Result<JobSubmitOutcome> SqliteStore::CreateJob(const JobRecord& job,
                                                std::optional<int64_t> max_queued) {
  return Guard<Result<JobSubmitOutcome>>("saving job", [&]() -> Result<JobSubmitOutcome> {
    StoreTransaction tx(db_);
    if (!job.idempotency_key.empty()) {
      SQLite::Statement k(db_, "SELECT id FROM jobs WHERE org_id = ? AND idempotency_key = ?");
      k.bind(1, job.org_id);
      k.bind(2, job.idempotency_key);
      if (k.executeStep()) {
        ASSIGN_OR_RETURN(JobRecord earlier, GetJobLocked(job.org_id, k.getColumn(0).getString()));
        if (earlier.fingerprint != job.fingerprint) {
          return Conflict("Idempotency-Key '" + job.idempotency_key +
                          "' was used for a different job submission");
        }
        return JobSubmitOutcome{std::move(earlier), true};
      }
    }
    if (max_queued) {
      SQLite::Statement n(db_, "SELECT COUNT(*) FROM jobs WHERE org_id = ? AND status = 'queued'");
      n.bind(1, job.org_id);
      n.executeStep();
      RETURN_IF_ERROR(CheckQueuedJobsLimit(*max_queued, n.getColumn(0).getInt64()));
    }
    ASSIGN_OR_RETURN(std::string env, EncodeEnvColumn(sealer_, job.org_id, job.id, job.spec.env));
    SQLite::Statement ins(
        db_,
        "INSERT INTO jobs(id, org_id, status, spec, env, max_attempts, attempts, last_run_id, "
        "exit_code, error, idempotency_key, fingerprint, created_at, updated_at, finished_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, job.id);
    ins.bind(2, job.org_id);
    ins.bind(3, job.status);
    ins.bind(4, EncodeSpec(job.spec));
    ins.bind(5, env);
    ins.bind(6, job.max_attempts);
    ins.bind(7, job.attempts);
    ins.bind(8, job.last_run_id);
    BindNullableInt(ins, 9, job.exit_code);
    ins.bind(10, job.error);
    if (job.idempotency_key.empty()) {
      ins.bind(11);
    } else {
      ins.bind(11, job.idempotency_key);
    }
    ins.bind(12, job.fingerprint);
    ins.bind(13, job.created_at);
    ins.bind(14, job.updated_at);
    ins.bind(15, job.finished_at);
    ins.exec();
    SQLite::Statement trim(db_,
                           "DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE org_id = ? "
                           "AND status IN ('succeeded', 'failed', 'cancelled', "
                           "'infrastructure_failed') ORDER BY seq DESC LIMIT -1 OFFSET ?)");
    trim.bind(1, job.org_id);
    trim.bind(2, kKeptEndedJobsPerOrg);
    trim.exec();
    ASSIGN_OR_RETURN(JobRecord created, GetJobLocked(job.org_id, job.id));
    tx.commit();
    return JobSubmitOutcome{std::move(created), false};
  });
}

Result<JobRecord> SqliteStore::GetJob(const std::string& org_id, const std::string& id) {
  return Guard<Result<JobRecord>>("reading job", [&] { return GetJobLocked(org_id, id); });
}

Result<JobPage> SqliteStore::ListJobs(const std::string& org_id, int limit,
                                      std::optional<int64_t> before_seq) {
  return Guard<Result<JobPage>>("listing jobs", [&]() -> Result<JobPage> {
    SQLite::Statement q(db_, std::string("SELECT ") + kJobColumns +
                                 " FROM jobs WHERE org_id = ? AND seq < ? ORDER BY seq DESC "
                                 "LIMIT ?");
    q.bind(1, org_id);
    q.bind(2, before_seq.value_or(INT64_MAX));
    q.bind(3, limit + 1);
    JobPage page;
    while (q.executeStep()) page.items.push_back(ReadJob(q));
    if (static_cast<int>(page.items.size()) > limit) {
      page.items.pop_back();
      page.next_seq = page.items.back().seq;
    }
    return page;
  });
}

Result<std::vector<JobRecord>> SqliteStore::ListJobsWithStatus(
    const std::vector<std::string>& statuses) {
  return Guard<Result<std::vector<JobRecord>>>(
      "listing jobs", [&]() -> Result<std::vector<JobRecord>> {
        std::vector<JobRecord> out;
        if (statuses.empty()) return out;
        SQLite::Statement q(db_, std::string("SELECT ") + kJobColumns +
                                     " FROM jobs WHERE status IN " + InList(statuses.size()) +
                                     " ORDER BY seq");
        for (size_t i = 0; i < statuses.size(); ++i) q.bind(static_cast<int>(i) + 1, statuses[i]);
        while (q.executeStep()) out.push_back(ReadJob(q));
        return out;
      });
}

Result<std::vector<JobRecord>> SqliteStore::ListQueueHeads() {
  return Guard<Result<std::vector<JobRecord>>>(
      "listing the heads of the job queues", [&]() -> Result<std::vector<JobRecord>> {
        std::vector<JobRecord> out;
        // The inner query reads jobs_by_status only; a job's spec and env are decoded for
        // the heads alone.
        SQLite::Statement q(db_, std::string("SELECT ") + kJobColumns +
                                     " FROM jobs WHERE seq IN (SELECT MIN(seq) FROM jobs WHERE "
                                     "status = 'queued' GROUP BY org_id) ORDER BY seq");
        while (q.executeStep()) out.push_back(ReadJob(q));
        return out;
      });
}

Status SqliteStore::UpdateJob(const JobRecord& job, const std::vector<std::string>& expected) {
  return Guard("updating job", [&]() -> Status {
    StoreTransaction tx(db_);
    ASSIGN_OR_RETURN(JobRecord stored, GetJobLocked("", job.id));
    bool allowed = false;
    for (const auto& s : expected) allowed = allowed || s == stored.status;
    if (!allowed) return Conflict("job '" + job.id + "' is " + stored.status);
    SQLite::Statement q(db_,
                        "UPDATE jobs SET status = ?, max_attempts = ?, attempts = ?, "
                        "last_run_id = ?, exit_code = ?, error = ?, updated_at = ?, "
                        "finished_at = ? WHERE id = ?");
    q.bind(1, job.status);
    q.bind(2, job.max_attempts);
    q.bind(3, job.attempts);
    q.bind(4, job.last_run_id);
    BindNullableInt(q, 5, job.exit_code);
    q.bind(6, job.error);
    q.bind(7, job.updated_at);
    q.bind(8, job.finished_at);
    q.bind(9, job.id);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Status SqliteStore::DeleteJob(const std::string& org_id, const std::string& id,
                              const std::vector<std::string>& deletable) {
  return Guard("deleting job", [&]() -> Status {
    StoreTransaction tx(db_);
    ASSIGN_OR_RETURN(JobRecord stored, GetJobLocked(org_id, id));
    bool allowed = false;
    for (const auto& s : deletable) allowed = allowed || s == stored.status;
    if (!allowed) return Conflict("job '" + id + "' is " + stored.status);
    SQLite::Statement q(db_, "DELETE FROM jobs WHERE id = ?");
    q.bind(1, id);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

bool SqliteStore::UpsertRun(SQLite::Database& db, const RunRecord& r) {
  // The stored status (none: a new run) says whether this write changes it.
  SQLite::Statement before(db, "SELECT status FROM runs WHERE id = ?");
  before.bind(1, r.id);
  bool changed = !before.executeStep() || before.getColumn(0).getString() != r.status;
  SQLite::Statement q(
      db,
      "INSERT INTO runs(id, org_id, job_id, automation_id, trigger, attempt, sandbox_id, "
      "command_id, status, exit_code, error, stdout_text, stderr_text, stdout_truncated, "
      "stderr_truncated, scheduled_at, started_at, ended_at, created_at) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
      "sandbox_id = excluded.sandbox_id, command_id = excluded.command_id, "
      "status = excluded.status, exit_code = excluded.exit_code, error = excluded.error, "
      "stdout_text = excluded.stdout_text, stderr_text = excluded.stderr_text, "
      "stdout_truncated = excluded.stdout_truncated, "
      "stderr_truncated = excluded.stderr_truncated, started_at = excluded.started_at, "
      "ended_at = excluded.ended_at");
  q.bind(1, r.id);
  q.bind(2, r.org_id);
  q.bind(3, r.job_id);
  q.bind(4, r.automation_id);
  q.bind(5, r.trigger);
  q.bind(6, r.attempt);
  q.bind(7, r.sandbox_id);
  q.bind(8, r.command_id);
  q.bind(9, r.status);
  BindNullableInt(q, 10, r.exit_code);
  q.bind(11, r.error);
  q.bind(12, r.stdout_text);
  q.bind(13, r.stderr_text);
  q.bind(14, r.stdout_truncated ? 1 : 0);
  q.bind(15, r.stderr_truncated ? 1 : 0);
  q.bind(16, r.scheduled_at);
  q.bind(17, r.started_at);
  q.bind(18, r.ended_at);
  q.bind(19, r.created_at);
  q.exec();
  if (!changed) return false;
  // The run's event, in the same transaction: the organization's stream (GET /v1/events).
  EventRecord e = RunEvent(r);
  SQLite::Statement ev(db,
                       "INSERT INTO events(org_id, sandbox_id, status, at, run_id, automation_id, "
                       "job_id, attempt, exit_code, run_sandbox_id) VALUES (?,'',?,?,?,?,?,?,?,?)");
  ev.bind(1, e.org_id);
  ev.bind(2, e.status);
  ev.bind(3, e.at);
  ev.bind(4, e.run_id);
  ev.bind(5, e.automation_id);
  ev.bind(6, e.job_id);
  ev.bind(7, e.attempt);
  BindNullableInt(ev, 8, e.exit_code);
  ev.bind(9, e.run_sandbox_id);
  ev.exec();
  return true;
}

Status SqliteStore::PutRun(const RunRecord& r) {
  bool changed = false;
  RETURN_IF_ERROR(Guard("saving run", [&]() -> Status {
    StoreTransaction tx(db_);
    changed = UpsertRun(db_, r);
    tx.commit();
    return Status::Ok();
  }));
  if (changed) AnnounceRunEvent(r.id);
  return Status::Ok();
}

Result<RunRecord> SqliteStore::GetRun(const std::string& org_id, const std::string& id) {
  return Guard<Result<RunRecord>>("reading run", [&]() -> Result<RunRecord> {
    SQLite::Statement q(db_, std::string("SELECT ") + kRunColumns +
                                 " FROM runs WHERE id = ? AND (? = '' OR org_id = ?)");
    q.bind(1, id);
    q.bind(2, org_id);
    q.bind(3, org_id);
    if (!q.executeStep()) return NotFound("run '" + id + "' not found");
    return ReadRun(q);
  });
}

Result<RunPage> SqliteStore::ListRuns(const std::string& org_id, const RunFilter& filter, int limit,
                                      std::optional<int64_t> before_seq) {
  return Guard<Result<RunPage>>("listing runs", [&]() -> Result<RunPage> {
    SQLite::Statement q(db_, std::string("SELECT ") + kRunColumns +
                                 " FROM runs WHERE org_id = ? AND seq < ? AND (? = '' OR "
                                 "job_id = ?) AND (? = '' OR automation_id = ?) ORDER BY seq "
                                 "DESC LIMIT ?");
    q.bind(1, org_id);
    q.bind(2, before_seq.value_or(INT64_MAX));
    q.bind(3, filter.job_id);
    q.bind(4, filter.job_id);
    q.bind(5, filter.automation_id);
    q.bind(6, filter.automation_id);
    q.bind(7, limit + 1);
    RunPage page;
    while (q.executeStep()) page.items.push_back(ReadRun(q));
    if (static_cast<int>(page.items.size()) > limit) {
      page.items.pop_back();
      page.next_seq = page.items.back().seq;
    }
    return page;
  });
}

Result<std::vector<RunRecord>> SqliteStore::ListRunsWithStatus(
    const std::vector<std::string>& statuses) {
  return Guard<Result<std::vector<RunRecord>>>(
      "listing runs", [&]() -> Result<std::vector<RunRecord>> {
        std::vector<RunRecord> out;
        if (statuses.empty()) return out;
        SQLite::Statement q(db_, std::string("SELECT ") + kRunColumns +
                                     " FROM runs WHERE status IN " + InList(statuses.size()) +
                                     " ORDER BY seq");
        for (size_t i = 0; i < statuses.size(); ++i) q.bind(static_cast<int>(i) + 1, statuses[i]);
        while (q.executeStep()) out.push_back(ReadRun(q));
        return out;
      });
}

Result<int64_t> SqliteStore::PruneRuns(const std::string& job_id, const std::string& automation_id,
                                       int64_t ended_before, int keep) {
  return Guard<Result<int64_t>>("pruning runs", [&]() -> Result<int64_t> {
    StoreTransaction tx(db_);
    // Both through an index (runs_by_end, runs_by_owner): neither reads the whole table.
    SQLite::Statement old(db_, "DELETE FROM runs WHERE ended_at > 0 AND ended_at < ?");
    old.bind(1, ended_before);
    int64_t n = old.exec();
    n += PruneOwnerRunsLocked(job_id, automation_id, keep);
    tx.commit();
    return n;
  });
}

int64_t SqliteStore::PruneOwnerRunsLocked(const std::string& job_id,
                                          const std::string& automation_id, int keep) {
  // Older than the owner's keep-th newest run (running ones count, and are never removed).
  SQLite::Statement extra(db_,
                          "DELETE FROM runs WHERE job_id = ?1 AND automation_id = ?2 AND "
                          "ended_at > 0 AND seq < (SELECT seq FROM runs WHERE job_id = ?1 AND "
                          "automation_id = ?2 ORDER BY seq DESC LIMIT 1 OFFSET ?3)");
  extra.bind(1, job_id);
  extra.bind(2, automation_id);
  extra.bind(3, std::max(keep, 1) - 1);
  return extra.exec();
}

}  // namespace adapt::store
