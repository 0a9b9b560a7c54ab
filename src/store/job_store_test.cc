// JobStore's contract (store/job_store.h), against SQLite and MemoryStore alike.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::SqliteStoreTest;
using testing_support::StoreTest;

JobRecord Job(const std::string& org_id, const std::string& key = "") {
  JobRecord j;
  j.id = NewId("job");
  j.org_id = org_id;
  j.status = "queued";
  j.spec.image = "python:3.12-slim";
  j.spec.cpu = 2;
  j.spec.memory_mib = 1024;
  j.spec.disk_mib = 2048;
  j.spec.egress = "none";
  j.spec.env = {{"TOKEN", "job-secret-value"}};
  j.spec.secrets = {"API_KEY"};
  j.spec.argv = {"/bin/sh", "-c", "echo hi"};
  j.spec.cwd = "/workspace";
  j.spec.timeout_seconds = 90;
  j.max_attempts = 5;
  j.idempotency_key = key;
  j.fingerprint = "fp-1";
  j.created_at = j.updated_at = 1000;
  return j;
}

RunRecord NewRun(const std::string& org_id, const std::string& job_id, int attempt,
                 int64_t ended_at = 0) {
  RunRecord r;
  r.id = NewId("run");
  r.org_id = org_id;
  r.job_id = job_id;
  r.trigger = attempt == 1 ? "manual" : "retry";
  r.attempt = attempt;
  r.status = ended_at ? "succeeded" : "running";
  r.created_at = r.started_at = 1000 + attempt;
  r.ended_at = ended_at;
  return r;
}

TEST_P(StoreTest, JobRoundTripsEveryFieldAndIsScopedToItsOrganization) {
  JobRecord j = Job(org_.id);
  auto created = store_->CreateJob(j);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_FALSE(created->replayed);
  Reopen();
  auto got = store_->GetJob(org_.id, j.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->spec.image, "python:3.12-slim");
  EXPECT_EQ(got->spec.cpu, 2);
  EXPECT_EQ(got->spec.memory_mib, 1024);
  EXPECT_EQ(got->spec.disk_mib, 2048);
  EXPECT_EQ(got->spec.egress, "none");
  EXPECT_EQ(got->spec.env.at("TOKEN"), "job-secret-value");
  EXPECT_EQ(got->spec.secrets, std::vector<std::string>{"API_KEY"});
  EXPECT_EQ(got->spec.argv.back(), "echo hi");
  EXPECT_EQ(got->spec.cwd, "/workspace");
  EXPECT_EQ(got->spec.timeout_seconds, 90);
  EXPECT_EQ(got->max_attempts, 5);
  EXPECT_FALSE(got->exit_code.has_value());
  EXPECT_EQ(store_->GetJob(other_org_.id, j.id).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->ListJobs(other_org_.id, 10, std::nullopt)->items.empty());
}

TEST_P(StoreTest, AnIdempotencyKeyReplaysTheSameSubmitAndRefusesAnotherPerOrganization) {
  JobRecord first = Job(org_.id, "key-1");
  ASSERT_TRUE(store_->CreateJob(first).ok());
  JobRecord again = Job(org_.id, "key-1");
  auto replay = store_->CreateJob(again);
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->replayed);
  EXPECT_EQ(replay->job.id, first.id);

  JobRecord different = Job(org_.id, "key-1");
  different.fingerprint = "fp-2";
  EXPECT_EQ(store_->CreateJob(different).status().code(), Code::kConflict);

  auto other = store_->CreateJob(Job(other_org_.id, "key-1"));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->replayed);
  EXPECT_EQ(store_->ListJobs(org_.id, 10, std::nullopt)->items.size(), 1u);
}

TEST_P(StoreTest, TheQueuedJobsLimitIsCountedPerOrganizationInTheInsert) {
  ASSERT_TRUE(store_->CreateJob(Job(org_.id), 2).ok());
  JobRecord replayed = Job(org_.id, "key-q");
  ASSERT_TRUE(store_->CreateJob(replayed, 2).ok());
  // A replay inserts nothing, so the limit does not refuse it.
  EXPECT_TRUE(store_->CreateJob(Job(org_.id, "key-q"), 2).ok());
  auto over = store_->CreateJob(Job(org_.id), 2);
  ASSERT_EQ(over.status().code(), Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("limit queued_jobs = 2"), std::string::npos);
  EXPECT_EQ(store_->ListJobs(org_.id, 10, std::nullopt)->items.size(), 2u);
  // Another organization's queue is its own; a job that left the queue frees its place.
  EXPECT_TRUE(store_->CreateJob(Job(other_org_.id), 2).ok());
  JobRecord started = *store_->GetJob(org_.id, replayed.id);
  started.status = "running";
  ASSERT_TRUE(store_->UpdateJob(started, {"queued"}).ok());
  EXPECT_TRUE(store_->CreateJob(Job(org_.id), 2).ok());
  EXPECT_EQ(store_->CreateJob(Job(org_.id), 0).status().code(), Code::kResourceExhausted);
}

// A submit drops the organization's ended jobs past its newest kKeptEndedJobsPerOrg: never a
// queued or running one, never another organization's.
TEST_P(StoreTest, AnOrganizationKeepsItsNewestEndedJobsOnly) {
  JobRecord waiting = Job(org_.id);
  ASSERT_TRUE(store_->CreateJob(waiting).ok());
  JobRecord theirs = Job(other_org_.id);
  theirs.status = "failed";
  ASSERT_TRUE(store_->CreateJob(theirs).ok());
  std::vector<std::string> ended;
  for (int64_t i = 0; i < kKeptEndedJobsPerOrg + 3; ++i) {
    JobRecord j = Job(org_.id);
    j.status = "cancelled";
    ASSERT_TRUE(store_->CreateJob(j).ok());
    ended.push_back(j.id);
  }
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(store_->GetJob(org_.id, ended[i]).status().code(), Code::kNotFound) << i;
  EXPECT_TRUE(store_->GetJob(org_.id, ended[3]).ok());
  EXPECT_TRUE(store_->GetJob(org_.id, waiting.id).ok());
  EXPECT_TRUE(store_->GetJob(other_org_.id, theirs.id).ok());
}

TEST_P(StoreTest, JobsQueueOldestFirstListNewestFirstAndUpdateOnlyFromTheExpectedStatus) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    JobRecord j = Job(org_.id);
    ASSERT_TRUE(store_->CreateJob(j).ok());
    ids.push_back(j.id);
  }
  auto queued = store_->ListJobsWithStatus({"queued"});
  ASSERT_EQ(queued->size(), 3u);
  EXPECT_EQ((*queued)[0].id, ids[0]);
  EXPECT_EQ((*queued)[2].id, ids[2]);

  auto page = store_->ListJobs(org_.id, 2, std::nullopt);
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].id, ids[2]);
  ASSERT_TRUE(page->next_seq.has_value());
  auto rest = store_->ListJobs(org_.id, 2, page->next_seq);
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].id, ids[0]);

  JobRecord j = (*queued)[0];
  j.status = "running";
  j.attempts = 1;
  EXPECT_TRUE(store_->UpdateJob(j, {"queued"}).ok());
  j.status = "cancelled";
  EXPECT_EQ(store_->UpdateJob(j, {"queued"}).code(), Code::kConflict);
  j.status = "succeeded";
  j.exit_code = 0;
  j.finished_at = 2000;
  EXPECT_TRUE(store_->UpdateJob(j, {"running"}).ok());
  auto got = store_->GetJob("", j.id);
  EXPECT_EQ(got->status, "succeeded");
  EXPECT_EQ(got->exit_code, 0);
  EXPECT_EQ(got->attempts, 1);
  EXPECT_EQ(store_->ListJobsWithStatus({"queued"})->size(), 2u);
}

TEST_P(StoreTest, TheQueueHeadsAreEachOrganizationsOldestQueuedJobOldestFirst) {
  EXPECT_TRUE(store_->ListQueueHeads()->empty());
  JobRecord first = Job(org_.id), second = Job(org_.id), theirs = Job(other_org_.id),
            third = Job(org_.id);
  for (const auto* j : {&first, &second, &theirs, &third}) ASSERT_TRUE(store_->CreateJob(*j).ok());
  Reopen();
  auto heads = store_->ListQueueHeads();
  ASSERT_TRUE(heads.ok()) << heads.status().message();
  ASSERT_EQ(heads->size(), 2u);
  EXPECT_EQ((*heads)[0].id, first.id);
  EXPECT_EQ((*heads)[0].spec.env.at("TOKEN"), "job-secret-value");
  EXPECT_EQ((*heads)[1].id, theirs.id);
  // The head left the queue: the next one in line is the head now, after the other's.
  JobRecord started = (*heads)[0];
  started.status = "running";
  ASSERT_TRUE(store_->UpdateJob(started, {"queued"}).ok());
  heads = store_->ListQueueHeads();
  ASSERT_EQ(heads->size(), 2u);
  EXPECT_EQ((*heads)[0].id, second.id);
  EXPECT_EQ((*heads)[1].id, theirs.id);
  started = (*heads)[1];
  started.status = "cancelled";
  ASSERT_TRUE(store_->UpdateJob(started, {"queued"}).ok());
  heads = store_->ListQueueHeads();
  ASSERT_EQ(heads->size(), 1u);
  EXPECT_EQ((*heads)[0].id, second.id);
}

TEST_P(StoreTest, OnlyADeletableJobIsDeletedAndItsRunsStay) {
  JobRecord j = Job(org_.id);
  ASSERT_TRUE(store_->CreateJob(j).ok());
  RunRecord r = NewRun(org_.id, j.id, 1, 3000);
  ASSERT_TRUE(store_->PutRun(r).ok());
  EXPECT_EQ(store_->DeleteJob(org_.id, j.id, {"succeeded"}).code(), Code::kConflict);
  EXPECT_EQ(store_->DeleteJob(other_org_.id, j.id, {"queued"}).code(), Code::kNotFound);
  EXPECT_TRUE(store_->DeleteJob(org_.id, j.id, {"queued"}).ok());
  EXPECT_EQ(store_->GetJob(org_.id, j.id).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->GetRun(org_.id, r.id).ok());
}

TEST_P(StoreTest, RunsAreUpdatedInPlaceFilteredByJobAndScopedToTheOrganization) {
  RunRecord a = NewRun(org_.id, "job_a", 1);
  RunRecord b = NewRun(org_.id, "job_b", 1);
  ASSERT_TRUE(store_->PutRun(a).ok());
  ASSERT_TRUE(store_->PutRun(b).ok());
  a.status = "failed";
  a.exit_code = 3;
  a.sandbox_id = "sbx_1";
  a.stdout_text = "out";
  a.stderr_truncated = true;
  a.ended_at = 5000;
  ASSERT_TRUE(store_->PutRun(a).ok());
  Reopen();
  auto got = store_->GetRun(org_.id, a.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "failed");
  EXPECT_EQ(got->exit_code, 3);
  EXPECT_EQ(got->sandbox_id, "sbx_1");
  EXPECT_EQ(got->stdout_text, "out");
  EXPECT_TRUE(got->stderr_truncated);
  EXPECT_EQ(got->trigger, "manual");
  EXPECT_EQ(store_->GetRun(other_org_.id, a.id).status().code(), Code::kNotFound);

  auto all = store_->ListRuns(org_.id, {}, 10, std::nullopt);
  ASSERT_EQ(all->items.size(), 2u);
  EXPECT_EQ(all->items[0].id, b.id);
  auto of_a = store_->ListRuns(org_.id, {"job_a", ""}, 10, std::nullopt);
  ASSERT_EQ(of_a->items.size(), 1u);
  EXPECT_EQ(of_a->items[0].id, a.id);
  EXPECT_EQ(store_->ListRunsWithStatus({"running"})->size(), 1u);
}

TEST_P(StoreTest, PruningForgetsOldRunsAndAllButTheNewestOfItsOwnerButNeverARunningOne) {
  std::vector<RunRecord> runs;
  for (int i = 1; i <= 4; ++i) runs.push_back(NewRun(org_.id, "job_a", i, 10000 + i));
  runs.push_back(NewRun(org_.id, "job_b", 1, 100));  // ended long ago
  runs.push_back(NewRun(org_.id, "job_c", 1));       // still running
  for (int i = 1; i <= 3; ++i) runs.push_back(NewRun(org_.id, "job_d", i, 20000 + i));
  RunRecord automation_run = NewRun(org_.id, "", 1, 30000);
  automation_run.automation_id = "aut_1";
  runs.push_back(automation_run);
  for (const auto& r : runs) ASSERT_TRUE(store_->PutRun(r).ok());
  auto pruned = store_->PruneRuns("job_a", "", 5000, 2);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  // job_a's two oldest and job_b's (too old); job_d's third, past the keep too, waits for
  // job_d's own next end.
  EXPECT_EQ(*pruned, 3);
  auto left = store_->ListRuns(org_.id, {}, 20, std::nullopt);
  std::vector<std::string> ids;
  for (const auto& r : left->items) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::string>{runs[9].id, runs[8].id, runs[7].id, runs[6].id,
                                           runs[5].id, runs[3].id, runs[2].id}));

  pruned = store_->PruneRuns("job_d", "", 5000, 2);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 1);
  EXPECT_EQ(store_->GetRun(org_.id, runs[6].id).status().code(), Code::kNotFound);
  // An automation's runs are its own owner: a job id of "" does not make them one with others.
  pruned = store_->PruneRuns("", "aut_1", 5000, 1);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 0);
  EXPECT_TRUE(store_->GetRun(org_.id, runs[9].id).ok());
}

TEST_P(StoreTest, PruningCountsARunningRunTowardTheKeepButNeverRemovesIt) {
  RunRecord ended_old = NewRun(org_.id, "job_a", 1, 10001);
  RunRecord ended_new = NewRun(org_.id, "job_a", 2, 10002);
  RunRecord running = NewRun(org_.id, "job_a", 3);
  for (const auto& r : {ended_old, ended_new, running}) ASSERT_TRUE(store_->PutRun(r).ok());
  auto pruned = store_->PruneRuns("job_a", "", 5000, 1);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  EXPECT_EQ(*pruned, 2);
  EXPECT_TRUE(store_->GetRun(org_.id, running.id).ok());
  EXPECT_EQ(store_->GetRun(org_.id, ended_new.id).status().code(), Code::kNotFound);
}

TEST_P(StoreTest, ARunsStatusChangeWritesItsEventAndIsAnnouncedOnce) {
  std::vector<std::string> announced;
  store_->SetRunEventListener([&](const std::string& id) { announced.push_back(id); });
  auto before = store_->LatestEventSeq();
  ASSERT_TRUE(before.ok());
  RunRecord r = NewRun(org_.id, "job_1", 2);
  r.status = "starting";
  ASSERT_TRUE(store_->PutRun(r).ok());
  r.command_id = "cmd_1";  // the same status: no event
  ASSERT_TRUE(store_->PutRun(r).ok());
  r.status = "failed";
  r.sandbox_id = "sbx_1";
  r.exit_code = 3;
  r.ended_at = 5000;
  ASSERT_TRUE(store_->PutRun(r).ok());
  EXPECT_EQ(announced, (std::vector<std::string>{r.id, r.id}));

  auto events = store_->ListEvents(org_.id, "", *before, 10);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].status, "starting");
  EXPECT_EQ((*events)[0].at, 1002);
  EXPECT_FALSE((*events)[0].exit_code.has_value());
  const EventRecord& ended = (*events)[1];
  EXPECT_EQ(ended.run_id, r.id);
  EXPECT_EQ(ended.job_id, "job_1");
  EXPECT_TRUE(ended.automation_id.empty());
  EXPECT_EQ(ended.status, "failed");
  EXPECT_EQ(ended.attempt, 2);
  EXPECT_EQ(ended.exit_code, 3);
  EXPECT_EQ(ended.run_sandbox_id, "sbx_1");
  EXPECT_TRUE(ended.sandbox_id.empty());  // not on the sandbox's own stream
  EXPECT_EQ(ended.at, 5000);
  EXPECT_GT(ended.seq, (*events)[0].seq);
  EXPECT_TRUE(store_->ListEvents(org_.id, "sbx_1", *before, 10)->empty());
  EXPECT_TRUE(store_->ListEvents(other_org_.id, "", *before, 10)->empty());
  store_->SetRunEventListener({});
}

TEST_F(SqliteStoreTest, AJobsEnvironmentIsSealedAtRest) {
  ValueSealer sealer;
  sealer.seal = [](const std::string& org, const std::string& aad,
                   const std::string& plain) -> Result<std::string> {
    return org + "|" + aad + "|" + std::string(plain.rbegin(), plain.rend());
  };
  sealer.open = [](const std::string& org, const std::string& aad,
                   const std::string& sealed) -> Result<std::string> {
    std::string prefix = org + "|" + aad + "|";
    if (sealed.rfind(prefix, 0) != 0) return Internal("does not open");
    std::string body = sealed.substr(prefix.size());
    return std::string(body.rbegin(), body.rend());
  };
  ASSERT_TRUE(store_->SetValueSealer(sealer).ok());
  JobRecord j = Job(org_.id);
  ASSERT_TRUE(store_->CreateJob(j).ok());
  {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT env FROM jobs WHERE id = ?");
    q.bind(1, j.id);
    ASSERT_TRUE(q.executeStep());
    EXPECT_EQ(q.getColumn(0).getString().find("job-secret-value"), std::string::npos);
  }
  EXPECT_EQ(store_->GetJob(org_.id, j.id)->spec.env.at("TOKEN"), "job-secret-value");
}

}  // namespace
}  // namespace adapt::store
