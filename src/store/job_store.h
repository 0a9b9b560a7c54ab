// JobStore: one-shot jobs and the runs that execute them (issue 18). One domain of Store
// (store/store.h): a service that needs only this domain depends on this interface, and a test
// can give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
//
// A run belongs to a job or (later) an automation, so schedules and controllers add rows of the
// same table with their own `trigger`; a run outlives its job (history expires on its own).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/idempotency_store.h"
#include "store/records.h"

namespace adapt::store {

// What each attempt's fresh instant sandbox is made from, and the command it runs.
struct JobTemplate {
  std::string image;
  int64_t cpu = 1;
  int64_t memory_mib = 512;
  int64_t disk_mib = 1024;
  std::string egress = "open";             // "open" or "none"
  std::map<std::string, std::string> env;  // sealed at rest, as a sandbox's env
  std::vector<std::string> secrets;        // organization secrets, by name
  std::vector<std::string> argv;
  std::string cwd;
  int timeout_seconds = 600;  // the command's, and the sandbox's TTL
};

struct JobRecord {
  int64_t seq = 0;  // queue order (assigned by the store)
  std::string id;
  std::string org_id;
  // queued, running, succeeded, failed, cancelled, infrastructure_failed.
  std::string status;
  JobTemplate spec;
  int max_attempts = 3;
  int attempts = 0;  // attempts started so far
  std::string last_run_id;
  std::optional<int> exit_code;  // of the final attempt
  std::string error;             // why it ended without an exit code
  std::string idempotency_key;   // empty: none
  std::string fingerprint;       // the submit as it was sent, for the key's replay
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t finished_at = 0;  // 0 while not terminal
};

struct RunRecord {
  int64_t seq = 0;  // assigned by the store
  std::string id;
  std::string org_id;
  std::string job_id;         // one of job_id, automation_id
  std::string automation_id;  // (schedules and controllers)
  std::string trigger;        // schedule, manual, catch_up, retry, controller
  int attempt = 1;
  std::string sandbox_id;  // the sandbox it used (empty before one was made)
  std::string command_id;  // the command it ran there
  // queued, starting, running, succeeded, failed, cancelled, skipped_overlap, skipped_quota,
  // missed, infrastructure_failed.
  std::string status;
  std::optional<int> exit_code;
  std::string error;        // why it failed without an exit code
  std::string stdout_text;  // the latest 64 KiB, redacted
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  int64_t scheduled_at = 0;
  int64_t started_at = 0;
  int64_t ended_at = 0;
  int64_t created_at = 0;
};

// The event a run's status change writes (EventStore; `event: run` on GET /v1/events): at the
// run's latest time (its end, else its start, else its creation).
inline EventRecord RunEvent(const RunRecord& r) {
  EventRecord e;
  e.org_id = r.org_id;
  e.status = r.status;
  e.at = r.ended_at ? r.ended_at : r.started_at ? r.started_at : r.created_at;
  e.run_id = r.id;
  e.automation_id = r.automation_id;
  e.job_id = r.job_id;
  e.attempt = r.attempt;
  e.exit_code = r.exit_code;
  e.run_sandbox_id = r.sandbox_id;
  return e;
}

struct JobPage {
  std::vector<JobRecord> items;
  std::optional<int64_t> next_seq;
};

struct RunPage {
  std::vector<RunRecord> items;
  std::optional<int64_t> next_seq;
};

struct JobSubmitOutcome {
  JobRecord job;
  bool replayed = false;  // an earlier submit with the same idempotency key
};

struct RunFilter {
  std::string job_id;         // empty: any
  std::string automation_id;  // empty: any
};

// Its creates take an Idempotency-Key: the idempotency table is reachable from it.
// A job keeps its spec and sealed env (up to 32 KiB) until deleted: a loop of submits that end
// at once (cancelled, or refused) would otherwise grow the store without bound.
inline constexpr int64_t kKeptEndedJobsPerOrg = 1000;

class JobStore : public virtual IdempotencyStore {
 public:
  virtual ~JobStore() = default;

  // Inserts `job`. With an idempotency key already used by the organization, returns that job
  // (replayed) when the fingerprints match, else Conflict; nothing is inserted either way.
  // With `max_queued`, kResourceExhausted (nothing inserted) when the organization already
  // has that many queued jobs, counted in the same transaction as the insert. The same
  // transaction drops the organization's ended jobs (succeeded, failed, cancelled,
  // infrastructure_failed) older than its newest kKeptEndedJobsPerOrg.
  virtual Result<JobSubmitOutcome> CreateJob(const JobRecord& job,
                                             std::optional<int64_t> max_queued = std::nullopt) = 0;
  // NotFound unless the job belongs to the organization ("": any organization).
  virtual Result<JobRecord> GetJob(const std::string& org_id, const std::string& id) = 0;
  // Newest first.
  virtual Result<JobPage> ListJobs(const std::string& org_id, int limit,
                                   std::optional<int64_t> before_seq) = 0;
  // Jobs with one of `statuses`, oldest first (the queue, and the daemon's reconciliation).
  virtual Result<std::vector<JobRecord>> ListJobsWithStatus(
      const std::vector<std::string>& statuses) = 0;
  // Each organization's oldest queued job, oldest first: what the queue may start next. Reads
  // one job per organization, however many wait.
  virtual Result<std::vector<JobRecord>> ListQueueHeads() = 0;
  // Replaces the job if its stored status is one of `expected`, else Conflict (two racing
  // transitions cannot both win).
  virtual Status UpdateJob(const JobRecord& job, const std::vector<std::string>& expected) = 0;
  // Deletes the job if its status is one of `deletable`; Conflict if not, NotFound if there is
  // no such job of the organization. Its runs stay.
  virtual Status DeleteJob(const std::string& org_id, const std::string& id,
                           const std::vector<std::string>& deletable) = 0;

  // Inserts the run, or replaces the stored one with the same id.
  virtual Status PutRun(const RunRecord& run) = 0;
  virtual Result<RunRecord> GetRun(const std::string& org_id, const std::string& id) = 0;
  // Newest first.
  virtual Result<RunPage> ListRuns(const std::string& org_id, const RunFilter& filter, int limit,
                                   std::optional<int64_t> before_seq) = 0;
  virtual Result<std::vector<RunRecord>> ListRunsWithStatus(
      const std::vector<std::string>& statuses) = 0;
  // Forgets ended runs (anyone's) that ended before `ended_before`, and the ended runs of one
  // owner (`job_id` or `automation_id`, the other empty) past its newest `keep`; returns how
  // many. Called as an owner's run ends, so it reads that owner's runs only: with 10,000
  // automations the table holds up to a million runs.
  virtual Result<int64_t> PruneRuns(const std::string& job_id, const std::string& automation_id,
                                    int64_t ended_before, int keep) = 0;
};

}  // namespace adapt::store
