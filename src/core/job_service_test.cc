// JobService's queue and retry decisions, over a MemoryStore and attempts the test scripts:
// the specification of when a job starts, retries and ends.
#include "core/job_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

// Attempts that start nothing: the test ends each one as it likes.
class ScriptedAttempts : public JobAttempts {
 public:
  struct Started {
    store::JobRecord job;
    store::RunRecord run;
    Progress progress;
    Done done;
    bool ended = false;
    bool reattached = false;
  };

  void Start(const store::JobRecord& job, const store::RunRecord& run, Progress progress,
             Done done) override {
    started.push_back({job, run, std::move(progress), std::move(done)});
  }
  void Reattach(const store::JobRecord& job, const store::RunRecord& run, Done done) override {
    started.push_back({job, run, {}, std::move(done), false, true});
  }
  bool Cancel(const std::string& run_id) override {
    for (const auto& s : started)
      if (s.run.id == run_id && !s.ended) {
        cancelled.push_back(run_id);
        return true;
      }
    return false;
  }
  void Abandon(const std::string&, const std::string& sandbox_id) override {
    abandoned.push_back(sandbox_id);
  }

  // Ends started attempt `i` with `kind` (and `exit_code` when it exited).
  void End(size_t i, AttemptEnd::Kind kind, std::optional<int> exit_code = std::nullopt,
           std::string out = "") {
    ASSERT_LT(i, started.size());
    ASSERT_FALSE(started[i].ended);
    started[i].ended = true;
    AttemptEnd end;
    end.kind = kind;
    end.exit_code = exit_code;
    end.sandbox_id = started[i].reattached ? started[i].run.sandbox_id : "sbx_" + std::to_string(i);
    end.stdout_text = std::move(out);
    // Moved out first: a retry's Start appends to `started` while `done` runs.
    auto done = std::move(started[i].done);
    done(std::move(end));
  }
  std::vector<std::string> RunningJobs() const {
    std::vector<std::string> out;
    for (const auto& s : started)
      if (!s.ended) out.push_back(s.job.id);
    return out;
  }

  std::vector<Started> started;
  std::vector<std::string> cancelled;
  std::vector<std::string> abandoned;
};

// A MemoryStore that counts what the queue reads of it.
class QueueReadsStore : public store::MemoryStore {
 public:
  Result<std::vector<store::JobRecord>> ListJobsWithStatus(
      const std::vector<std::string>& statuses) override {
    for (const auto& s : statuses) whole_queue_reads += s == "queued";
    return MemoryStore::ListJobsWithStatus(statuses);
  }
  Result<std::vector<store::JobRecord>> ListQueueHeads() override {
    auto heads = MemoryStore::ListQueueHeads();
    if (heads.ok()) most_jobs_read = std::max(most_jobs_read, heads->size());
    return heads;
  }
  int whole_queue_reads = 0;
  size_t most_jobs_read = 0;  // by one read of the queue
};

class JobServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    org_.org_id = store_.CreateOrg({NewId("org"), "acme", false, NowMillis()})->id;
    other_.org_id = store_.CreateOrg({NewId("org"), "other", false, NowMillis()})->id;
  }

  std::string MustSubmit(const Principal& who, int max_attempts = 3) {
    SubmitJob req;
    req.argv = {"/bin/sh", "-c", "echo hi"};
    req.max_attempts = max_attempts;
    auto out = jobs_.Submit(who, req, std::nullopt);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? out->job.id : "";
  }
  std::string JobStatus(const std::string& job_id) { return jobs_.Get(org_, job_id)->status; }
  std::vector<core::Run> RunsOf(const std::string& job_id) {
    auto page = jobs_.ListRuns(org_, {job_id, "", 50, ""});
    EXPECT_TRUE(page.ok()) << page.status().message();
    return page.ok() ? page->items : std::vector<core::Run>{};
  }

  QueueReadsStore store_;
  ScriptedAttempts attempts_;
  JobService jobs_{store_, attempts_, "test-image", 2};
  Principal org_, other_;
};

TEST_F(JobServiceTest, JobsStartInSubmissionOrderAndAtMostTheLimitPerOrganizationAtOnce) {
  std::string a = MustSubmit(org_), b = MustSubmit(org_), c = MustSubmit(org_);
  EXPECT_EQ(attempts_.RunningJobs(), (std::vector<std::string>{a, b}));
  EXPECT_EQ(JobStatus(c), "queued");
  // Another organization's jobs do not wait for this one's.
  std::string x = MustSubmit(other_);
  EXPECT_EQ(attempts_.RunningJobs(), (std::vector<std::string>{a, b, x}));

  attempts_.End(0, AttemptEnd::Kind::kExited, 0, "hi\n");
  EXPECT_EQ(attempts_.RunningJobs(), (std::vector<std::string>{b, x, c}));
  EXPECT_EQ(JobStatus(a), "succeeded");
  auto runs = RunsOf(a);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "succeeded");
  EXPECT_EQ(runs[0].trigger, "manual");
  EXPECT_EQ(runs[0].exit_code, 0);
  EXPECT_EQ(runs[0].stdout_text, "hi\n");
  EXPECT_EQ(runs[0].sandbox_id, "sbx_0");
}

TEST_F(JobServiceTest, TheQueueIsReadAHeadPerOrganizationNotWhole) {
  std::vector<std::string> ids;
  for (int i = 0; i < 40; ++i) ids.push_back(MustSubmit(org_));
  std::string theirs = MustSubmit(other_);
  EXPECT_EQ(attempts_.RunningJobs(), (std::vector<std::string>{ids[0], ids[1], theirs}));
  for (int i = 0; i < 6; ++i) attempts_.End(i < 2 ? i : i + 1, AttemptEnd::Kind::kExited, 0);
  // Every end started the next job in line, and no read took more than one job per
  // organization (40 queued), nor the whole queue.
  EXPECT_EQ(attempts_.RunningJobs(), (std::vector<std::string>{theirs, ids[6], ids[7]}));
  EXPECT_EQ(JobStatus(ids[8]), "queued");
  EXPECT_LE(store_.most_jobs_read, 2u);
  EXPECT_EQ(store_.whole_queue_reads, 0);
}

TEST_F(JobServiceTest, ANonZeroExitIsTheApplicationsResultAndIsNotRetried) {
  std::string a = MustSubmit(org_);
  attempts_.End(0, AttemptEnd::Kind::kExited, 3);
  EXPECT_EQ(attempts_.started.size(), 1u);
  auto job = jobs_.Get(org_, a);
  EXPECT_EQ(job->status, "failed");
  EXPECT_EQ(job->exit_code, 3);
  EXPECT_EQ(job->attempts, 1);
  EXPECT_EQ(RunsOf(a)[0].status, "failed");
}

TEST_F(JobServiceTest, AnInfrastructureFailureIsRetriedInAFreshAttemptUpToMaxAttempts) {
  std::string a = MustSubmit(org_, 2);
  attempts_.End(0, AttemptEnd::Kind::kInfrastructure);
  ASSERT_EQ(attempts_.started.size(), 2u);
  EXPECT_EQ(attempts_.started[1].run.attempt, 2);
  EXPECT_EQ(attempts_.started[1].run.trigger, "retry");
  EXPECT_EQ(JobStatus(a), "running");
  attempts_.End(1, AttemptEnd::Kind::kInfrastructure);
  EXPECT_EQ(attempts_.started.size(), 2u);
  EXPECT_EQ(JobStatus(a), "infrastructure_failed");
  auto runs = RunsOf(a);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].attempt, 2);
  EXPECT_EQ(runs[0].status, "infrastructure_failed");
  EXPECT_EQ(runs[1].attempt, 1);
}

TEST_F(JobServiceTest, ARetryThatSucceedsEndsTheJobSucceeded) {
  std::string a = MustSubmit(org_);
  attempts_.End(0, AttemptEnd::Kind::kInfrastructure);
  attempts_.End(1, AttemptEnd::Kind::kExited, 0);
  auto job = jobs_.Get(org_, a);
  EXPECT_EQ(job->status, "succeeded");
  EXPECT_EQ(job->attempts, 2);
}

TEST_F(JobServiceTest, ATimeoutOrARefusedSandboxIsFinal) {
  std::string a = MustSubmit(org_), b = MustSubmit(org_);
  attempts_.End(0, AttemptEnd::Kind::kTimedOut);
  attempts_.End(1, AttemptEnd::Kind::kRefused);
  EXPECT_EQ(attempts_.started.size(), 2u);
  EXPECT_EQ(JobStatus(a), "failed");
  EXPECT_EQ(JobStatus(b), "failed");
}

TEST_F(JobServiceTest, CancellingAQueuedJobKeepsItFromStartingAndARunningOneIsCancelledByRun) {
  std::string a = MustSubmit(org_), b = MustSubmit(org_), c = MustSubmit(org_);
  auto cancelled = jobs_.Cancel(org_, c);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().message();
  EXPECT_EQ(cancelled->status, "cancelled");
  auto running = jobs_.Cancel(org_, a);
  EXPECT_EQ(running.status().code(), Code::kConflict);
  EXPECT_NE(running.status().message().find(attempts_.started[0].run.id), std::string::npos);

  attempts_.End(0, AttemptEnd::Kind::kExited, 0);
  EXPECT_EQ(attempts_.RunningJobs(), (std::vector<std::string>{b}));
  EXPECT_EQ(JobStatus(c), "cancelled");
  EXPECT_TRUE(RunsOf(c).empty());
  EXPECT_EQ(jobs_.Cancel(org_, c).status().code(), Code::kConflict);
}

TEST_F(JobServiceTest, ACancelledRunEndsCancelledAndIsNotRetried) {
  std::string a = MustSubmit(org_);
  std::string run_id = attempts_.started[0].run.id;
  auto run = jobs_.CancelRun(org_, run_id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(attempts_.cancelled, std::vector<std::string>{run_id});
  // The command went with the sandbox's kill: it still counts as cancelled, not retried.
  attempts_.End(0, AttemptEnd::Kind::kInfrastructure);
  EXPECT_EQ(attempts_.started.size(), 1u);
  EXPECT_EQ(jobs_.GetRun(org_, run_id)->status, "cancelled");
  EXPECT_EQ(JobStatus(a), "cancelled");
  // An ended run is returned as it is.
  EXPECT_EQ(jobs_.CancelRun(org_, run_id)->status, "cancelled");
}

TEST_F(JobServiceTest, OnlyATerminalJobIsDeletedAndItsRunsStay) {
  std::string a = MustSubmit(org_);
  EXPECT_EQ(jobs_.Delete(org_, a).code(), Code::kConflict);
  attempts_.End(0, AttemptEnd::Kind::kExited, 1);
  EXPECT_TRUE(jobs_.Delete(org_, a).ok());
  EXPECT_EQ(jobs_.Get(org_, a).status().code(), Code::kNotFound);
  EXPECT_EQ(RunsOf(a).size(), 1u);
}

TEST_F(JobServiceTest, AJobRunCarriesItsSandboxsMeteredUsage) {
  jobs_.set_usage_store(&store_);
  std::string a = MustSubmit(org_);
  std::string run_id = attempts_.started[0].run.id;
  EXPECT_FALSE(jobs_.GetRun(org_, run_id)->usage);  // no sandbox yet
  attempts_.End(0, AttemptEnd::Kind::kExited, 0);   // its sandbox was sbx_0
  EXPECT_EQ(jobs_.GetRun(org_, run_id)->usage->entries, 0);
  for (int64_t from : {1000, 31000}) {
    store::LedgerEntryRecord e;
    e.id = "use_sbx_0_" + std::to_string(from);
    e.org_id = org_.org_id;
    e.kind = "usage";
    e.amount_nanos = 5;
    e.subject_kind = "sandbox";
    e.subject_id = "sbx_0";
    e.period_start = from;
    e.period_end = from + 30000;
    e.cpu_millis = 30000;
    e.memory_mib_millis = 128 * 30000;
    ASSERT_TRUE(store_.AppendLedgerEntry(e).ok());
  }
  auto run = jobs_.GetRun(org_, run_id);
  ASSERT_TRUE(run.ok() && run->usage);
  EXPECT_EQ(run->usage->entries, 2);
  EXPECT_EQ(run->usage->cpu_millis, 60000);
  EXPECT_EQ(run->usage->memory_mib_millis, 128 * 60000);
  EXPECT_EQ(run->usage->amount_nanos, 10);
  EXPECT_EQ(RunsOf(a)[0].usage->cpu_millis, 60000);  // lists show it too
  EXPECT_EQ(jobs_.GetRun(other_, run_id).status().code(), Code::kNotFound);
}

TEST_F(JobServiceTest, AnotherOrganizationsJobsAndRunsAreNotFound) {
  std::string a = MustSubmit(org_);
  std::string run_id = attempts_.started[0].run.id;
  EXPECT_EQ(jobs_.Get(other_, a).status().code(), Code::kNotFound);
  EXPECT_EQ(jobs_.Cancel(other_, a).status().code(), Code::kNotFound);
  EXPECT_EQ(jobs_.Delete(other_, a).code(), Code::kNotFound);
  EXPECT_EQ(jobs_.GetRun(other_, run_id).status().code(), Code::kNotFound);
  EXPECT_EQ(jobs_.CancelRun(other_, run_id).status().code(), Code::kNotFound);
  EXPECT_TRUE(jobs_.List(other_, {})->items.empty());
  EXPECT_TRUE(jobs_.ListRuns(other_, {})->items.empty());
  EXPECT_TRUE(attempts_.cancelled.empty());
}

TEST_F(JobServiceTest, AnIdempotencyKeyReplaysTheFirstSubmit) {
  SubmitJob req;
  req.argv = {"/bin/true"};
  auto first = jobs_.Submit(org_, req, IdempotencyRequest{"k1", "fp"});
  auto again = jobs_.Submit(org_, req, IdempotencyRequest{"k1", "fp"});
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->job.id, first->job.id);
  EXPECT_EQ(attempts_.started.size(), 1u);
  EXPECT_EQ(jobs_.Submit(org_, req, IdempotencyRequest{"k1", "other"}).status().code(),
            Code::kConflict);
}

TEST_F(JobServiceTest, SubmitRefusesBadValuesNamingTheCallersField) {
  SubmitJob req;
  req.argv = {"/bin/true"};
  req.max_attempts = 11;
  FieldNames names(std::map<std::string, std::string>{{"max_attempts", "maxAttempts"}});
  auto out = jobs_.Submit(org_, req, std::nullopt, names);
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(out.status().field(), "maxAttempts");
  req.max_attempts = 3;
  req.argv.clear();
  EXPECT_EQ(jobs_.Submit(org_, req, std::nullopt).status().field(), "argv");
  req.argv = {"/bin/true"};
  req.timeout_seconds = 0;
  EXPECT_EQ(jobs_.Submit(org_, req, std::nullopt).status().field(), "timeout_seconds");
  EXPECT_TRUE(jobs_.List(org_, {})->items.empty());
}

TEST_F(JobServiceTest, AQuotaRefusalRecordsTheRunSkippedAndEndsTheJob) {
  jobs_.set_run_admission([](const std::string&) {
    return Status(Code::kResourceExhausted, "the plan's run time is used up");
  });
  std::string a = MustSubmit(org_);
  EXPECT_TRUE(attempts_.started.empty());
  auto runs = RunsOf(a);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "skipped_quota");
  EXPECT_EQ(runs[0].error, "the plan's run time is used up");
  EXPECT_EQ(JobStatus(a), "failed");
}

TEST_F(JobServiceTest, RecoveryRecordsExecutingRunsInfrastructureFailedAndRetriesTheirJobs) {
  std::string a = MustSubmit(org_, 3);
  std::string b = MustSubmit(org_, 1);
  std::string run_a = attempts_.started[0].run.id;
  attempts_.started[0].progress.sandbox("sbx_old");
  // A new adaptd over the same store: the attempts above died with the old one.
  ScriptedAttempts after;
  JobService restarted(store_, after, "test-image", 2);
  restarted.Recover();
  EXPECT_EQ(store_.GetRun(org_.org_id, run_a)->status, "infrastructure_failed");
  EXPECT_EQ(after.abandoned, std::vector<std::string>{"sbx_old"});
  ASSERT_EQ(after.started.size(), 1u);
  EXPECT_EQ(after.started[0].job.id, a);
  EXPECT_EQ(after.started[0].run.attempt, 2);
  EXPECT_EQ(after.started[0].run.trigger, "retry");
  EXPECT_EQ(store_.GetJob("", b)->status, "infrastructure_failed");
}

TEST_F(JobServiceTest, RecoveryReattachesAnAttemptWhoseCommandStartedAndRecordsItsEnd) {
  std::string a = MustSubmit(org_, 3);
  std::string b = MustSubmit(org_, 3);
  std::string run_a = attempts_.started[0].run.id, run_b = attempts_.started[1].run.id;
  attempts_.started[0].progress.sandbox("sbx_a");
  attempts_.started[0].progress.command("cmd_a");
  attempts_.started[1].progress.sandbox("sbx_b");  // still booting: no command yet
  std::string c = MustSubmit(org_, 3);             // queued behind the limit of 2

  ScriptedAttempts after;
  JobService restarted(store_, after, "test-image", 2);
  restarted.Recover();
  // a's attempt is followed, not failed; b's is failed and retried; c still waits, as a and
  // b's retry hold the organization's two slots.
  ASSERT_EQ(after.started.size(), 2u);
  EXPECT_TRUE(after.started[0].reattached);
  EXPECT_EQ(after.started[0].run.id, run_a);
  EXPECT_EQ(after.started[0].run.sandbox_id, "sbx_a");
  EXPECT_EQ(after.started[0].run.command_id, "cmd_a");
  EXPECT_EQ(after.started[1].job.id, b);
  EXPECT_EQ(after.started[1].run.attempt, 2);
  EXPECT_EQ(after.abandoned, std::vector<std::string>{"sbx_b"});
  EXPECT_EQ(store_.GetRun(org_.org_id, run_a)->status, "running");
  EXPECT_EQ(store_.GetRun(org_.org_id, run_b)->status, "infrastructure_failed");
  EXPECT_EQ(restarted.Get(org_, a)->status, "running");
  EXPECT_EQ(restarted.Get(org_, c)->status, "queued");

  after.End(0, AttemptEnd::Kind::kExited, 0, "done\n");
  auto run = store_.GetRun(org_.org_id, run_a);
  EXPECT_EQ(run->status, "succeeded");
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_EQ(run->stdout_text, "done\n");
  EXPECT_EQ(run->attempt, 1);
  auto job = restarted.Get(org_, a);
  EXPECT_EQ(job->status, "succeeded");
  EXPECT_EQ(job->attempts, 1);
  // Its slot freed, the queue moves on.
  ASSERT_EQ(after.started.size(), 3u);
  EXPECT_EQ(after.started[2].job.id, c);
}

TEST_F(JobServiceTest, AReattachedAttemptWhoseCommandWasLostIsRetriedAndOneCanBeCancelled) {
  std::string a = MustSubmit(org_, 2);
  std::string b = MustSubmit(org_, 2);
  for (int i = 0; i < 2; ++i) {
    attempts_.started[i].progress.sandbox("sbx_" + std::to_string(i));
    attempts_.started[i].progress.command("cmd_" + std::to_string(i));
  }
  std::string run_b = attempts_.started[1].run.id;
  ScriptedAttempts after;
  JobService restarted(store_, after, "test-image", 2);
  restarted.Recover();
  ASSERT_EQ(after.started.size(), 2u);
  EXPECT_TRUE(after.abandoned.empty());

  // The agent no longer ran a's command: an infrastructure failure, retried.
  after.End(0, AttemptEnd::Kind::kInfrastructure);
  ASSERT_EQ(after.started.size(), 3u);
  EXPECT_FALSE(after.started[2].reattached);
  EXPECT_EQ(after.started[2].job.id, a);
  EXPECT_EQ(after.started[2].run.attempt, 2);
  EXPECT_EQ(after.started[2].run.trigger, "retry");

  // b's re-attached run is cancelled by its id and ends cancelled, not retried.
  auto cancelling = restarted.CancelRun(org_, run_b);
  ASSERT_TRUE(cancelling.ok()) << cancelling.status().message();
  EXPECT_EQ(after.cancelled, std::vector<std::string>{run_b});
  after.End(1, AttemptEnd::Kind::kCancelled);
  EXPECT_EQ(store_.GetRun(org_.org_id, run_b)->status, "cancelled");
  EXPECT_EQ(restarted.Get(org_, b)->status, "cancelled");
  EXPECT_EQ(after.started.size(), 3u);
}

TEST(LatestBytes, KeepsTheEndAndStartsAtACharacter) {
  bool truncated = false;
  EXPECT_EQ(LatestBytes("abc", 3, truncated), "abc");
  EXPECT_FALSE(truncated);
  // "é" is two bytes: cutting inside it drops the half.
  EXPECT_EQ(LatestBytes("xé!", 2, truncated), "!");
  EXPECT_TRUE(truncated);
  EXPECT_EQ(LatestBytes("xé!", 3, truncated), "é!");
}

TEST_F(JobServiceTest, AnImageTheImageCheckRefusesIsRefusedAtSubmitAndNothingIsQueued) {
  std::vector<std::string> judged;
  jobs_.set_image_check(
      [&judged](const Principal&, const CreateSandbox& sandbox, const FieldNames& names) {
        judged.push_back(sandbox.image.value_or("") + " " + sandbox.startup_class.value_or("") +
                         (sandbox.surface == RequestSurface::kAssistant ? " assistant" : " api"));
        if (sandbox.image == "ghcr.io/evil/x")
          return Status(Code::kPermissionDenied, "refused by the rule", names("image"));
        return Status::Ok();
      });
  SubmitJob req;
  req.argv = {"/bin/sh", "-c", "true"};
  req.sandbox.image = "ghcr.io/evil/x";
  req.sandbox.surface = RequestSurface::kAssistant;
  auto out = jobs_.Submit(org_, req, IdempotencyRequest{"k1", "f1"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(out.status().field(), "image");
  EXPECT_TRUE(jobs_.List(org_, {})->items.empty());
  EXPECT_TRUE(attempts_.started.empty());
  // What an attempt will create is what is judged: the same image, instant, the same surface.
  ASSERT_EQ(judged.size(), 1u);
  EXPECT_EQ(judged[0], "ghcr.io/evil/x instant assistant");
  req.sandbox.image = "python:3.12-slim";
  EXPECT_TRUE(jobs_.Submit(org_, req, std::nullopt).ok());
  EXPECT_EQ(jobs_.List(org_, {})->items.size(), 1u);
}

}  // namespace
}  // namespace adapt::core
