#include "core/job_service.h"

#include "base/client_message.h"
#include "base/ids.h"
#include "base/list_cursor.h"
#include "base/log.h"
#include "base/time.h"

namespace adapt::core {
namespace {

const std::vector<std::string> kTerminalJobStatuses = {"succeeded", "failed", "cancelled",
                                                       "infrastructure_failed"};
const std::vector<std::string> kExecutingRunStatuses = {"queued", "starting", "running"};

bool RunEnded(const store::RunRecord& r) {
  for (const auto& s : kExecutingRunStatuses)
    if (r.status == s) return false;
  return true;
}

// The run's status for how its attempt ended.
Status LimitOk(int limit) {
  if (limit < 1 || limit > 200) return InvalidArgument("limit", "limit must be between 1 and 200");
  return Status::Ok();
}

}  // namespace

JobService::JobService(store::JobStore& store, JobAttempts& attempts, std::string default_image,
                       int concurrency_per_org)
    : store_(store),
      attempts_(attempts),
      default_image_(std::move(default_image)),
      concurrency_per_org_(concurrency_per_org < 1 ? 1 : concurrency_per_org) {}

void JobService::Recover() {
  int64_t now = NowMillis();
  // Attempts whose command was started: the agent may still run it, so they are followed to
  // their end (CommandService re-attached the command or recorded it lost).
  std::vector<std::pair<store::JobRecord, store::RunRecord>> reattached;
  std::set<std::string> reattached_jobs;
  auto runs = store_.ListRunsWithStatus(kExecutingRunStatuses);
  if (!runs.ok()) {
    spdlog::error("jobs: listing runs to recover: {}", runs.status().message());
  } else {
    for (auto run : *runs) {
      // An automation's run is recovered by AutomationService, and its sandbox is the target.
      if (!run.automation_id.empty()) continue;
      if (run.status == "running" && !run.sandbox_id.empty() && !run.command_id.empty()) {
        auto job = store_.GetJob("", run.job_id);
        if (job.ok() && job->status == "running" && job->last_run_id == run.id) {
          reattached_jobs.insert(job->id);
          reattached.emplace_back(std::move(*job), std::move(run));
          continue;
        }
      }
      run.status = "infrastructure_failed";
      run.error = "adaptd restarted while the run was executing";
      run.ended_at = now;
      if (Status st = store_.PutRun(run); !st.ok())
        spdlog::error("jobs: recording run {}: {}", run.id, st.message());
      if (!run.sandbox_id.empty()) attempts_.Abandon(run.org_id, run.sandbox_id);
    }
  }
  auto jobs = store_.ListJobsWithStatus({"running"});
  if (!jobs.ok()) {
    spdlog::error("jobs: listing jobs to recover: {}", jobs.status().message());
  } else {
    for (auto job : *jobs) {
      if (reattached_jobs.count(job.id)) continue;
      // Requeued in place: its seq keeps its turn in the queue.
      if (job.attempts < job.max_attempts) {
        job.status = "queued";
      } else {
        job.status = "infrastructure_failed";
        job.error = "adaptd restarted while its last attempt was executing";
        job.finished_at = now;
      }
      job.updated_at = now;
      if (Status st = store_.UpdateJob(job, {"running"}); !st.ok())
        spdlog::error("jobs: recovering job {}: {}", job.id, st.message());
    }
  }
  // A re-attached attempt holds its organization's slot until it ends, as it did before.
  {
    std::lock_guard lock(mu_);
    for (const auto& [job, run] : reattached) {
      ++running_per_org_[job.org_id];
      active_runs_[run.id] = run;
    }
  }
  for (auto& [job, run] : reattached) {
    spdlog::info("jobs: following run {} of job {} again", run.id, job.id);
    attempts_.Reattach(job, run, [this, job_id = job.id, run_id = run.id](AttemptEnd end) {
      AttemptEnded(job_id, run_id, std::move(end));
    });
  }
  Pump();
}

Result<JobSubmission> JobService::Submit(const Principal& who, const SubmitJob& req,
                                         const std::optional<IdempotencyRequest>& idempotency,
                                         const FieldNames& names) {
  if (idempotency && (idempotency->key.empty() || idempotency->key.size() > 255)) {
    return InvalidArgument(names("idempotency_key"),
                           names("idempotency_key") + " must be 1 to 255 bytes");
  }
  ASSIGN_OR_RETURN(ValidJob valid, ValidateSubmitJob(req, default_image_, names));
  if (image_check_) RETURN_IF_ERROR(image_check_(who, AttemptSandbox(req), names));
  store::JobRecord job;
  job.id = NewId("job");
  job.org_id = who.org_id;
  job.status = "queued";
  job.spec = std::move(valid.spec);
  job.max_attempts = valid.max_attempts;
  if (idempotency) {
    job.idempotency_key = idempotency->key;
    job.fingerprint = idempotency->fingerprint;
  }
  job.created_at = job.updated_at = NowMillis();
  std::optional<int64_t> max_queued;
  if (queued_limit_) {
    ASSIGN_OR_RETURN(max_queued, queued_limit_(who.org_id));
  }
  ASSIGN_OR_RETURN(store::JobSubmitOutcome out, store_.CreateJob(job, max_queued));
  if (!out.replayed) Pump();
  // Read again: the queue may have started it already.
  auto now = store_.GetJob(who.org_id, out.job.id);
  return JobSubmission{ViewOf(now.ok() ? *now : out.job), out.replayed};
}

Result<Job> JobService::Get(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::JobRecord job, store_.GetJob(who.org_id, id));
  return ViewOf(job);
}

Result<JobPage> JobService::List(const Principal& who, const ListJobsRequest& req) {
  RETURN_IF_ERROR(LimitOk(req.limit));
  ASSIGN_OR_RETURN(std::optional<int64_t> before, ParseListCursor(req.cursor));
  ASSIGN_OR_RETURN(store::JobPage page, store_.ListJobs(who.org_id, req.limit, before));
  JobPage out;
  for (const auto& j : page.items) out.items.push_back(ViewOf(j));
  out.next_cursor = NextListCursor(page.next_seq);
  return out;
}

Result<Job> JobService::Cancel(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::JobRecord job, store_.GetJob(who.org_id, id));
  if (job.status == "running") {
    return Conflict("job '" + id + "' is running: cancel its run '" + job.last_run_id +
                    "' instead");
  }
  if (job.status != "queued") return Conflict("job '" + id + "' already ended " + job.status);
  job.status = "cancelled";
  job.error = "cancelled before it started";
  job.updated_at = job.finished_at = NowMillis();
  if (Status st = store_.UpdateJob(job, {"queued"}); !st.ok()) {
    // The queue started it meanwhile.
    if (st.code() == Code::kConflict) {
      ASSIGN_OR_RETURN(store::JobRecord now, store_.GetJob(who.org_id, id));
      return Conflict("job '" + id + "' started meanwhile: cancel its run '" + now.last_run_id +
                      "' instead");
    }
    return st;
  }
  return ViewOf(job);
}

Status JobService::Delete(const Principal& who, const std::string& id) {
  Status st = store_.DeleteJob(who.org_id, id, kTerminalJobStatuses);
  if (st.code() == Code::kConflict) {
    return Conflict("job '" + id + "' has not ended: only a succeeded, failed, cancelled or " +
                    "infrastructure_failed job can be deleted");
  }
  return st;
}

Result<RunPage> JobService::ListRuns(const Principal& who, const ListRunsRequest& req) {
  RETURN_IF_ERROR(LimitOk(req.limit));
  ASSIGN_OR_RETURN(std::optional<int64_t> before, ParseListCursor(req.cursor));
  ASSIGN_OR_RETURN(store::RunPage page,
                   store_.ListRuns(who.org_id, {req.job_id, req.automation_id}, req.limit, before));
  RunPage out;
  for (auto& r : page.items) {
    ASSIGN_OR_RETURN(Run run, WithUsage(std::move(r)));
    out.items.push_back(std::move(run));
  }
  out.next_cursor = NextListCursor(page.next_seq);
  return out;
}

Result<Run> JobService::GetRun(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(who.org_id, id));
  return WithUsage(std::move(run));
}

Result<Run> JobService::WithUsage(store::RunRecord record) {
  Run run{std::move(record), std::nullopt};
  if (!usage_ || run.job_id.empty() || run.sandbox_id.empty()) return run;
  ASSIGN_OR_RETURN(store::UsageTotalRecord used,
                   usage_->UsageOfSubject(run.org_id, run.sandbox_id));
  run.usage = RunUsage{used.cpu_millis, used.memory_mib_millis, used.gpu_millis, used.amount_nanos,
                       used.entries};
  return run;
}

Result<Run> JobService::CancelRun(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::RunRecord run, store_.GetRun(who.org_id, id));
  if (RunEnded(run)) return WithUsage(std::move(run));
  if (!run.automation_id.empty()) {
    if (automation_cancel_) automation_cancel_(id);
    return GetRun(who, id);
  }
  {
    std::lock_guard lock(mu_);
    cancel_requested_.insert(id);
  }
  if (!attempts_.Cancel(id)) {
    // Not executing here (it is being recorded as it ends): its end stands.
    std::lock_guard lock(mu_);
    cancel_requested_.erase(id);
  }
  return GetRun(who, id);
}

void JobService::Pump() {
  {
    std::lock_guard lock(mu_);
    // One pass at a time, so two never take the same slot; a pass asked for meanwhile (an
    // attempt ended, a job came) is made by the one running.
    if (pumping_) {
      pump_again_ = true;
      return;
    }
    pumping_ = true;
  }
  for (;;) {
    {
      std::lock_guard lock(mu_);
      pump_again_ = false;
    }
    // Each organization's oldest queued job only, not the whole queue: the store's lock is
    // everyone's, and a queue may hold thousands. A pass that started one looks again, for
    // the next job of an organization with another free slot.
    bool took = false;
    auto heads = store_.ListQueueHeads();
    if (!heads.ok()) spdlog::error("jobs: reading the queue: {}", heads.status().message());
    for (auto& job : heads.ok() ? *heads : std::vector<store::JobRecord>{}) {
      {
        std::lock_guard lock(mu_);
        int& running = running_per_org_[job.org_id];
        if (running >= concurrency_per_org_) continue;
        ++running;
      }
      took = StartAttempt(std::move(job)) || took;
    }
    std::lock_guard lock(mu_);
    if (!took && !pump_again_) {
      pumping_ = false;
      return;
    }
  }
}

void JobService::Release(const std::string& org_id) {
  std::lock_guard lock(mu_);
  auto it = running_per_org_.find(org_id);
  if (it != running_per_org_.end() && --it->second <= 0) running_per_org_.erase(it);
}

bool JobService::StartAttempt(store::JobRecord job) {
  int64_t now = NowMillis();
  std::string previous = job.status;
  store::RunRecord run;
  run.id = NewId("run");
  run.org_id = job.org_id;
  run.job_id = job.id;
  run.attempt = job.attempts + 1;
  run.trigger = run.attempt == 1 ? "manual" : "retry";
  run.status = "starting";
  run.scheduled_at = run.created_at = run.started_at = now;

  job.attempts = run.attempt;
  job.last_run_id = run.id;
  job.status = "running";
  job.updated_at = now;
  if (Status st = store_.UpdateJob(job, {previous}); !st.ok()) {
    // Cancelled (or deleted) since the queue was read: it does not start.
    Release(job.org_id);
    return false;
  }
  if (admission_) {
    Status admitted = admission_(job.org_id);
    if (admitted.code() == Code::kResourceExhausted) {
      AttemptEnd end;
      end.kind = AttemptEnd::Kind::kQuota;
      end.error = RecordMessage(admitted);
      run.status = "queued";
      {
        std::lock_guard lock(mu_);
        active_runs_[run.id] = run;
      }
      AttemptEnded(job.id, run.id, std::move(end));
      return true;
    }
  }
  if (Status st = store_.PutRun(run); !st.ok())
    spdlog::error("jobs: recording run {}: {}", run.id, st.message());
  {
    std::lock_guard lock(mu_);
    active_runs_[run.id] = run;
  }
  JobAttempts::Progress progress;
  std::string run_id = run.id;
  progress.sandbox = [this, run_id](const std::string& sandbox_id) {
    UpdateActiveRun(run_id, [&](store::RunRecord& r) { r.sandbox_id = sandbox_id; });
  };
  progress.command = [this, run_id](const std::string& command_id) {
    UpdateActiveRun(run_id, [&](store::RunRecord& r) {
      r.command_id = command_id;
      r.status = "running";
    });
  };
  std::string job_id = job.id;
  attempts_.Start(job, run, std::move(progress), [this, job_id, run_id](AttemptEnd end) {
    AttemptEnded(job_id, run_id, std::move(end));
  });
  return true;
}

void JobService::UpdateActiveRun(const std::string& run_id,
                                 const std::function<void(store::RunRecord&)>& change) {
  // Written under mu_, so that a progress report never lands after the run's end.
  std::lock_guard lock(mu_);
  auto it = active_runs_.find(run_id);
  if (it == active_runs_.end()) return;
  change(it->second);
  if (Status st = store_.PutRun(it->second); !st.ok())
    spdlog::error("jobs: recording run {}: {}", run_id, st.message());
}

void JobService::AttemptEnded(const std::string& job_id, const std::string& run_id,
                              AttemptEnd end) {
  store::RunRecord run;
  int64_t now = NowMillis();
  {
    std::lock_guard lock(mu_);
    auto it = active_runs_.find(run_id);
    if (it == active_runs_.end()) return;
    run = it->second;
    active_runs_.erase(it);
    if (cancel_requested_.erase(run_id)) CountAsCancelled(end);
    RecordAttemptEnd(run, end, now);
    run.error = end.error;
    if (!end.sandbox_id.empty()) run.sandbox_id = end.sandbox_id;
    if (Status st = store_.PutRun(run); !st.ok())
      spdlog::error("jobs: recording run {}: {}", run.id, st.message());
  }

  auto stored = store_.GetJob("", job_id);
  if (!stored.ok()) {
    spdlog::error("jobs: reading job {}: {}", job_id, stored.status().message());
    Release(run.org_id);
    Pump();
    return;
  }
  store::JobRecord job = *stored;
  if (end.kind == AttemptEnd::Kind::kInfrastructure && job.attempts < job.max_attempts) {
    // Retried at once, in the slot it holds: a fresh sandbox, the next attempt.
    StartAttempt(std::move(job));
    return;
  }
  job.status = run.status == "skipped_quota" ? "failed" : run.status;
  job.exit_code = end.exit_code;
  job.error = end.error;
  job.updated_at = job.finished_at = now;
  if (Status st = store_.UpdateJob(job, {"running"}); !st.ok())
    spdlog::error("jobs: ending job {}: {}", job.id, st.message());
  Release(job.org_id);
  if (auto pruned = store_.PruneRuns(job.id, "", now - kRunRetentionMillis, kKeptRunsPerOwner);
      !pruned.ok())
    spdlog::error("jobs: pruning runs: {}", pruned.status().message());
  Pump();
}

}  // namespace adapt::core
