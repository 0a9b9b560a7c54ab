// JobService: one-shot jobs (seed 000's submit_sandbox_job, list_sandbox_jobs,
// cancel_sandbox_job, delete_sandbox_job) and the runs that execute them (list_automation_runs,
// get_automation_run, cancel_automation_run). REST, MCP and the CLI only translate into these.
//
// Jobs queue per organization and start in submission order, at most `concurrency_per_org` at
// once. Each attempt is a run (trigger "manual", then "retry") executed by JobAttempts. An
// infrastructure failure is retried in a fresh sandbox until max_attempts; any other end is
// final (a non-zero exit is the application's result). All state is in the store: Recover
// follows the runs a previous adaptd left running through their sandbox's agent, records the
// others infrastructure_failed and requeues their jobs where attempts remain. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/auth.h"
#include "core/field_names.h"
#include "core/job_attempt.h"
#include "core/job_request.h"
#include "core/job_view.h"
#include "core/sandbox_service.h"
#include "store/job_store.h"
#include "store/usage_store.h"

namespace adapt::core {

struct ListJobsRequest {
  int limit = 50;
  std::string cursor;
};

struct ListRunsRequest {
  std::string job_id;         // empty: every run of the organization
  std::string automation_id;  // (schedules and controllers)
  int limit = 50;
  std::string cursor;
};

struct JobSubmission {
  Job job;
  bool replayed = false;  // an earlier submit with the same idempotency key
};

// Whether a limit of the organization lets a run start now (the accounts issue's plans fill
// it). kResourceExhausted records the run skipped_quota and ends its job; OK starts it.
using RunAdmission = std::function<Status(const std::string& org_id)>;

class JobService {
 public:
  static constexpr int kDefaultConcurrencyPerOrg = 4;
  static constexpr int kKeptRunsPerOwner = 100;
  static constexpr int64_t kRunRetentionMillis = 30LL * 24 * 3600 * 1000;

  JobService(store::JobStore& store, JobAttempts& attempts, std::string default_image,
             int concurrency_per_org = kDefaultConcurrencyPerOrg);

  // Set before serving.
  void set_run_admission(RunAdmission admission) { admission_ = std::move(admission); }
  // The organization's queued_jobs limit (its plan's); none when unset. Set before serving.
  void set_queued_limit(std::function<Result<std::optional<int64_t>>(const std::string&)> f) {
    queued_limit_ = std::move(f);
  }
  // Whether an attempt's sandbox may use the image the submit asks for (the trusted image
  // sources rule for its surface: SandboxService::CheckImageChoice), judged at submit so a
  // refused job is never queued; without it, attempts judge it. Set before serving.
  using ImageCheck =
      std::function<Status(const Principal&, const CreateSandbox&, const FieldNames&)>;
  void set_image_check(ImageCheck check) { image_check_ = std::move(check); }
  // Where runs' usage is read (the ledger); without it, runs carry none. Set before serving.
  void set_usage_store(store::UsageStore* usage) { usage_ = usage; }
  // Where cancel_automation_run goes for a run of an automation (AutomationService::CancelRun).
  void set_automation_cancel(std::function<bool(const std::string& run_id)> cancel) {
    automation_cancel_ = std::move(cancel);
  }

  // Call once, before serving: an attempt a previous adaptd left running with its command
  // started is re-attached (JobAttempts::Reattach) and ends as it would have; anything else it
  // left executing becomes infrastructure_failed (its sandbox deleted), its job requeued while
  // attempts remain; then the queue starts.
  void Recover();

  // Validates `req` and queues the job. With an idempotency key, a repeat with the same
  // fingerprint returns the first job (replayed), another one is kConflict.
  Result<JobSubmission> Submit(const Principal& who, const SubmitJob& req,
                               const std::optional<IdempotencyRequest>& idempotency,
                               const FieldNames& names = {});
  // NotFound for another organization's id.
  Result<Job> Get(const Principal& who, const std::string& id);
  // Newest first.
  Result<JobPage> List(const Principal& who, const ListJobsRequest& req);
  // A queued job becomes cancelled and never starts. kConflict for a running job (its run is
  // cancelled by run id) or one that already ended.
  Result<Job> Cancel(const Principal& who, const std::string& id);
  // Deletes a terminal job's record (kConflict otherwise); its runs expire on their own.
  Status Delete(const Principal& who, const std::string& id);

  // Newest first.
  Result<RunPage> ListRuns(const Principal& who, const ListRunsRequest& req);
  Result<Run> GetRun(const Principal& who, const std::string& id);
  // Best effort: asks the run's command to end (its process group is killed);
  // the run then ends cancelled and its job is not retried. Returns the run as it is now; a
  // run that already ended is returned unchanged.
  Result<Run> CancelRun(const Principal& who, const std::string& id);

 private:
  // Starts queued jobs, oldest first, while their organization has a free slot; reads only
  // the head of each organization's queue (JobStore::ListQueueHeads) at a time.
  void Pump();
  // Records attempt `attempt` of `job` and hands it to attempts_ (outside mu_). False when
  // the job could not leave the queue (cancelled since it was read): its slot is released.
  bool StartAttempt(store::JobRecord job);
  void AttemptEnded(const std::string& job_id, const std::string& run_id, AttemptEnd end);
  void UpdateActiveRun(const std::string& run_id,
                       const std::function<void(store::RunRecord&)>& change);
  void Release(const std::string& org_id);
  // The run as callers see it: with its usage (Run::usage) read from usage_.
  Result<Run> WithUsage(store::RunRecord record);

  store::JobStore& store_;
  JobAttempts& attempts_;
  std::string default_image_;
  int concurrency_per_org_;
  RunAdmission admission_;
  ImageCheck image_check_;
  store::UsageStore* usage_ = nullptr;
  std::function<Result<std::optional<int64_t>>(const std::string&)> queued_limit_;
  std::function<bool(const std::string&)> automation_cancel_;
  std::mutex mu_;
  bool pumping_ = false;                                 // guarded by mu_
  bool pump_again_ = false;                              // guarded by mu_
  std::map<std::string, int> running_per_org_;           // guarded by mu_
  std::map<std::string, store::RunRecord> active_runs_;  // guarded by mu_; by run id
  std::set<std::string> cancel_requested_;               // guarded by mu_; run ids
};

}  // namespace adapt::core
