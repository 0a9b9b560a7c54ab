// MemoryStore: one-shot jobs and runs, with the contract of store/job_store.h.
#include <algorithm>
#include <map>
#include <set>

#include "store/memory_store.h"

namespace adapt::store {
namespace {

bool OneOf(const std::string& s, const std::vector<std::string>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

template <typename Page, typename Row, typename Keep>
Page NewestFirst(const std::vector<Row>& rows, int limit, std::optional<int64_t> before_seq,
                 Keep keep) {
  Page page;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (before_seq && it->seq >= *before_seq) continue;
    if (!keep(*it)) continue;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_seq = page.items.back().seq;
      break;
    }
    page.items.push_back(*it);
  }
  return page;
}

}  // namespace

Result<JobSubmitOutcome> MemoryStore::CreateJob(const JobRecord& job,
                                                std::optional<int64_t> max_queued) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (!job.idempotency_key.empty()) {
    for (const auto& j : jobs_) {
      if (j.org_id != job.org_id || j.idempotency_key != job.idempotency_key) continue;
      if (j.fingerprint != job.fingerprint) {
        return Conflict("Idempotency-Key '" + job.idempotency_key +
                        "' was used for a different job submission");
      }
      return JobSubmitOutcome{j, true};
    }
  }
  for (const auto& j : jobs_)
    if (j.id == job.id) return Conflict("job '" + job.id + "' already exists");
  if (max_queued) {
    int64_t queued = 0;
    for (const auto& j : jobs_) queued += j.org_id == job.org_id && j.status == "queued";
    RETURN_IF_ERROR(CheckQueuedJobsLimit(*max_queued, queued));
  }
  JobRecord row = job;
  row.seq = next_seq_++;
  jobs_.push_back(row);
  int64_t ended = 0;  // jobs_ is by seq: the newest last
  for (auto it = jobs_.rbegin(); it != jobs_.rend();) {
    const auto& s = it->status;
    bool drop =
        it->org_id == job.org_id &&
        (s == "succeeded" || s == "failed" || s == "cancelled" || s == "infrastructure_failed") &&
        ++ended > kKeptEndedJobsPerOrg;
    it = drop ? std::make_reverse_iterator(jobs_.erase(std::next(it).base())) : std::next(it);
  }
  return JobSubmitOutcome{row, false};
}

Result<JobRecord> MemoryStore::GetJob(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& j : jobs_)
    if (j.id == id && (org_id.empty() || j.org_id == org_id)) return j;
  return NotFound("job '" + id + "' not found");
}

Result<JobPage> MemoryStore::ListJobs(const std::string& org_id, int limit,
                                      std::optional<int64_t> before_seq) {
  std::lock_guard lock(mu_);
  return NewestFirst<JobPage>(jobs_, limit, before_seq,
                              [&](const JobRecord& j) { return j.org_id == org_id; });
}

Result<std::vector<JobRecord>> MemoryStore::ListJobsWithStatus(
    const std::vector<std::string>& statuses) {
  std::lock_guard lock(mu_);
  std::vector<JobRecord> out;
  for (const auto& j : jobs_)
    if (OneOf(j.status, statuses)) out.push_back(j);
  return out;
}

Result<std::vector<JobRecord>> MemoryStore::ListQueueHeads() {
  std::lock_guard lock(mu_);
  std::vector<JobRecord> out;
  std::set<std::string> seen;
  for (const auto& j : jobs_)  // in insertion order: oldest first
    if (j.status == "queued" && seen.insert(j.org_id).second) out.push_back(j);
  return out;
}

Status MemoryStore::UpdateJob(const JobRecord& job, const std::vector<std::string>& expected) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto& j : jobs_) {
    if (j.id != job.id) continue;
    if (!OneOf(j.status, expected)) return Conflict("job '" + job.id + "' is " + j.status);
    j.status = job.status;
    j.max_attempts = job.max_attempts;
    j.attempts = job.attempts;
    j.last_run_id = job.last_run_id;
    j.exit_code = job.exit_code;
    j.error = job.error;
    j.updated_at = job.updated_at;
    j.finished_at = job.finished_at;
    return Status::Ok();
  }
  return NotFound("job '" + job.id + "' not found");
}

Status MemoryStore::DeleteJob(const std::string& org_id, const std::string& id,
                              const std::vector<std::string>& deletable) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if (it->id != id || it->org_id != org_id) continue;
    if (!OneOf(it->status, deletable)) return Conflict("job '" + id + "' is " + it->status);
    jobs_.erase(it);
    return Status::Ok();
  }
  return NotFound("job '" + id + "' not found");
}

bool MemoryStore::UpsertRunLocked(const RunRecord& run) {
  for (auto& r : runs_) {
    if (r.id != run.id) continue;
    int64_t seq = r.seq;
    RunRecord kept = r;
    r = run;
    r.seq = seq;
    // As SQLite's upsert: who the run belongs to and when it was created never change.
    r.org_id = kept.org_id;
    r.job_id = kept.job_id;
    r.automation_id = kept.automation_id;
    r.trigger = kept.trigger;
    r.attempt = kept.attempt;
    r.scheduled_at = kept.scheduled_at;
    r.created_at = kept.created_at;
    if (r.status == kept.status) return false;
    AppendRunEventLocked(r);
    return true;
  }
  RunRecord row = run;
  row.seq = next_seq_++;
  runs_.push_back(row);
  AppendRunEventLocked(row);
  return true;
}

void MemoryStore::AppendRunEventLocked(const RunRecord& run) {
  EventRecord e = RunEvent(run);
  e.seq = next_seq_++;
  events_.push_back(std::move(e));
}

Status MemoryStore::PutRun(const RunRecord& run) {
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    if (auto fault = WriteFaultLocked()) return *fault;
    changed = UpsertRunLocked(run);
  }
  if (changed) AnnounceRunEvent(run.id);
  return Status::Ok();
}

Result<RunRecord> MemoryStore::GetRun(const std::string& org_id, const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& r : runs_)
    if (r.id == id && (org_id.empty() || r.org_id == org_id)) return r;
  return NotFound("run '" + id + "' not found");
}

Result<RunPage> MemoryStore::ListRuns(const std::string& org_id, const RunFilter& filter, int limit,
                                      std::optional<int64_t> before_seq) {
  std::lock_guard lock(mu_);
  return NewestFirst<RunPage>(runs_, limit, before_seq, [&](const RunRecord& r) {
    return r.org_id == org_id && (filter.job_id.empty() || r.job_id == filter.job_id) &&
           (filter.automation_id.empty() || r.automation_id == filter.automation_id);
  });
}

Result<std::vector<RunRecord>> MemoryStore::ListRunsWithStatus(
    const std::vector<std::string>& statuses) {
  std::lock_guard lock(mu_);
  std::vector<RunRecord> out;
  for (const auto& r : runs_)
    if (OneOf(r.status, statuses)) out.push_back(r);
  return out;
}

Result<int64_t> MemoryStore::PruneRuns(const std::string& job_id, const std::string& automation_id,
                                       int64_t ended_before, int keep) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  return PruneRunsLocked(job_id, automation_id, ended_before, keep);
}

int64_t MemoryStore::PruneRunsLocked(const std::string& job_id, const std::string& automation_id,
                                     int64_t ended_before, int keep) {
  int newer = 0;  // the owner's runs seen so far, newest first
  std::vector<bool> drop(runs_.size(), false);
  for (size_t i = runs_.size(); i-- > 0;) {
    const RunRecord& r = runs_[i];
    bool owned = r.job_id == job_id && r.automation_id == automation_id;
    int rank = owned ? ++newer : 0;
    bool ended = r.ended_at > 0;
    drop[i] = ended && (r.ended_at < ended_before || rank > std::max(keep, 1));
  }
  int64_t n = 0;
  std::vector<RunRecord> kept;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (drop[i]) {
      ++n;
    } else {
      kept.push_back(runs_[i]);
    }
  }
  runs_ = std::move(kept);
  return n;
}

}  // namespace adapt::store
