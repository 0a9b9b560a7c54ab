// AutomationService's scheduling decisions over a MemoryStore, a fake clock and a runner the
// test scripts: when a slot fires, what overlap, catch-up, failures and versions do.
#include "core/automation_service.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/automation_service_fixture.h"

namespace adapt::core {
namespace {

using testing_support::AutomationServiceTest;

TEST_F(AutomationServiceTest, CreateAnswersTheNextFiveRunTimes) {
  Automation a = MustCreate(2);
  EXPECT_EQ(a.next_runs,
            (std::vector<int64_t>{1'002'000, 1'004'000, 1'006'000, 1'008'000, 1'010'000}));
  EXPECT_EQ(a.version, 1);
  EXPECT_TRUE(a.enabled);
}

TEST_F(AutomationServiceTest, BadSchedulesAndTargetsAreRefusedAndNothingIsStored) {
  CreateAutomationRequest req;
  req.sandbox_id = "sbx_target";
  req.argv = {"true"};
  req.interval_seconds = 0;
  EXPECT_EQ(service_.Create(org_, req).status().field(), "interval_seconds");
  req.interval_seconds.reset();
  req.cron = "TZ=UTC * * * * *";
  EXPECT_EQ(service_.Create(org_, req).status().field(), "cron");
  req.cron = "0 9 * * *";
  req.time_zone = "Nowhere/City";
  EXPECT_EQ(service_.Create(org_, req).status().field(), "time_zone");
  req.time_zone = "Europe/Berlin";
  req.sandbox_id = "sbx_someone_elses";
  EXPECT_EQ(service_.Create(org_, req).status().code(), Code::kNotFound);
  req.sandbox_id = "sbx_target";
  EXPECT_EQ(service_.Create(other_, req).status().code(), Code::kNotFound);
  // A cron past 256 bytes is refused whatever it says (spaces are valid separators).
  std::string cron = "0 9 * * *";
  req.cron = cron + std::string(257 - cron.size(), ' ');
  auto long_cron = service_.Create(org_, req);
  EXPECT_EQ(long_cron.status().field(), "cron");
  EXPECT_EQ(long_cron.status().message(), "cron must be at most 256 bytes");
  req.cron = cron;
  EXPECT_TRUE(service_.List(org_, {})->items.empty());
  EXPECT_TRUE(service_.Create(org_, req).ok());
}

TEST_F(AutomationServiceTest, ADueSlotFiresOnceAndTheNextIsScheduled) {
  Automation a = MustCreate(2);
  service_.Tick(now_ + 1'999);
  EXPECT_TRUE(runner_.started.empty());
  now_ += 2'000;
  service_.Tick(now_);
  service_.Tick(now_);  // a second pass over the same instant claims nothing
  ASSERT_EQ(runner_.started.size(), 1u);
  EXPECT_EQ(runner_.started[0].run.trigger, "schedule");
  EXPECT_EQ(runner_.started[0].run.scheduled_at, 1'002'000);
  EXPECT_EQ(service_.Get(org_, a.id)->next_due_at, 1'004'000);
  runner_.End(0, AttemptEnd::Kind::kExited, 0);
  EXPECT_EQ(Runs(a.id).at(0).status, "succeeded");
}

TEST_F(AutomationServiceTest, APassClaimsEveryDueSlotAtOnceAndAFailedWriteStartsNone) {
  std::vector<Automation> all;
  for (int i = 0; i < 5; ++i) all.push_back(MustCreate(2));
  now_ += 2'000;
  // The pass's one write fails: no slot is claimed, no run starts, none is lost.
  store_.FailWrites(Internal("disk full"));
  service_.Tick(now_);
  store_.FailWrites(std::nullopt);
  EXPECT_TRUE(runner_.started.empty());
  for (const auto& a : all) EXPECT_TRUE(Runs(a.id).empty());
  // The next pass claims them all, each slot once.
  service_.Tick(now_);
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), all.size());
  for (const auto& a : all) {
    ASSERT_EQ(Runs(a.id).size(), 1u);
    EXPECT_EQ(Runs(a.id)[0].scheduled_at, 1'002'000);
    EXPECT_EQ(service_.Get(org_, a.id)->next_due_at, 1'004'000);
  }
}

TEST_F(AutomationServiceTest, OverlapSkipRecordsTheSlotSkipped) {
  Automation a = MustCreate(2);
  now_ += 2'000;
  service_.Tick(now_);
  now_ += 2'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 1u);
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, "skipped_overlap");
  EXPECT_EQ(runs[0].scheduled_at, 1'004'000);
}

// "allow" overlaps, up to kMaxOverlappingRuns executing: runs that never end, every second,
// would otherwise hold commands and threads without bound.
TEST_F(AutomationServiceTest, OverlapAllowStartsRunsSideBySideUpToItsCap) {
  Automation a = MustCreate(1, "allow");
  const size_t slots = AutomationService::kMaxOverlappingRuns + 5;
  for (size_t i = 0; i < slots; ++i) {
    now_ += 1'000;
    service_.Tick(now_);
  }
  EXPECT_EQ(runner_.started.size(), AutomationService::kMaxOverlappingRuns);
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), slots);
  EXPECT_EQ(runs[0].status, "skipped_overlap");  // newest first
  EXPECT_NE(runs[0].error.find("runs executing"), std::string::npos) << runs[0].error;
  // One ends: the next slot starts again.
  runner_.End(0, AttemptEnd::Kind::kExited, 0);
  now_ += 1'000;
  service_.Tick(now_);
  EXPECT_EQ(runner_.started.size(), AutomationService::kMaxOverlappingRuns + 1);
}

TEST_F(AutomationServiceTest, OverlapCancelPreviousCancelsTheExecutingRun) {
  Automation a = MustCreate(2, "cancel_previous");
  now_ += 2'000;
  service_.Tick(now_);
  now_ += 2'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 2u);
  EXPECT_EQ(runner_.cancelled, std::vector<std::string>{runner_.started[0].run.id});
  runner_.End(0, AttemptEnd::Kind::kCancelled);
  EXPECT_EQ(store_.GetRun(org_.org_id, runner_.started[0].run.id)->status, "cancelled");
}

TEST_F(AutomationServiceTest, OverlapBufferOneKeepsOneSlotAndRunsItRightAfter) {
  Automation a = MustCreate(1, "buffer_one");
  now_ += 1'000;
  service_.Tick(now_);  // slot 1 starts
  ASSERT_EQ(runner_.started.size(), 1u);
  now_ += 1'000;
  service_.Tick(now_);  // slot 2 waits
  now_ += 1'000;
  service_.Tick(now_);  // slot 3: one waits already
  ASSERT_EQ(runner_.started.size(), 1u);
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].status, "skipped_overlap");
  EXPECT_EQ(runs[0].scheduled_at, 1'003'000);
  EXPECT_EQ(runs[1].status, "queued");
  EXPECT_EQ(runs[1].scheduled_at, 1'002'000);
  EXPECT_EQ(runs[1].started_at, 0);
  std::string buffered = runs[1].id;

  now_ += 500;
  runner_.End(0, AttemptEnd::Kind::kExited, 0);  // slot 1 ends: slot 2 starts at once
  ASSERT_EQ(runner_.started.size(), 2u);
  EXPECT_EQ(runner_.started[1].run.id, buffered);
  auto started = store_.GetRun(org_.org_id, buffered);
  EXPECT_EQ(started->status, "starting");
  EXPECT_EQ(started->started_at, 1'003'500);
  now_ += 500;
  service_.Tick(now_);  // slot 4 while slot 2 runs: buffered again
  EXPECT_EQ(Runs(a.id).at(0).status, "queued");
  // A buffered run cancelled never starts.
  std::string fourth = Runs(a.id).at(0).id;
  EXPECT_TRUE(service_.CancelRun(fourth));
  EXPECT_EQ(store_.GetRun(org_.org_id, fourth)->status, "cancelled");
  runner_.End(1, AttemptEnd::Kind::kExited, 0);
  EXPECT_EQ(runner_.started.size(), 2u);
  EXPECT_EQ(store_.GetRun(org_.org_id, buffered)->status, "succeeded");
  // Nothing executes now: the next slot starts at once.
  now_ += 1'000;
  service_.Tick(now_);
  EXPECT_EQ(runner_.started.size(), 3u);
}

TEST_F(AutomationServiceTest, ABufferedRunOfAPausedAutomationEndsCancelled) {
  Automation a = MustCreate(1, "buffer_one");
  now_ += 1'000;
  service_.Tick(now_);
  now_ += 1'000;
  service_.Tick(now_);
  ASSERT_EQ(Runs(a.id).at(0).status, "queued");
  ASSERT_TRUE(service_.SetEnabled(org_, a.id, false, std::nullopt).ok());
  runner_.End(0, AttemptEnd::Kind::kExited, 0);
  EXPECT_EQ(runner_.started.size(), 1u);
  EXPECT_EQ(Runs(a.id).at(0).status, "cancelled");
}

TEST_F(AutomationServiceTest, SlotsMissedWhileDownCollapseIntoOneCatchUpAndOlderOnesAreMissed) {
  Automation a = MustCreate(60);
  // Down for two hours: the window (an hour, and a minute's grace) holds 61 slots, the time
  // before it 59 more.
  now_ += 2 * 3600 * 1000 + 30'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 1u);
  EXPECT_EQ(runner_.started[0].run.trigger, "catch_up");
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].status, "missed");
  EXPECT_EQ(runs[1].scheduled_at, 1'060'000);
  EXPECT_NE(runs[1].error.find("59 slot(s)"), std::string::npos) << runs[1].error;
  EXPECT_EQ(runs[0].trigger, "catch_up");
  EXPECT_EQ(runs[0].scheduled_at, 1'000'000 + 120 * 60'000);
  runner_.End(0, AttemptEnd::Kind::kExited, 0);
  auto ended = store_.GetRun(org_.org_id, runs[0].id);
  EXPECT_EQ(ended->status, "succeeded");
  EXPECT_NE(ended->error.find("catches up 61 slot(s)"), std::string::npos) << ended->error;
  EXPECT_GT(service_.Get(org_, a.id)->next_due_at, now_);
}

TEST_F(AutomationServiceTest, ANonZeroExitIsNotRetriedAndFiveFailuresPause) {
  Automation a = MustCreate(1);
  for (int i = 0; i < 5; ++i) {
    now_ += 1'000;
    service_.Tick(now_);
    ASSERT_EQ(runner_.started.size(), static_cast<size_t>(i + 1));
    runner_.End(i, AttemptEnd::Kind::kExited, 3);
  }
  Automation after = *service_.Get(org_, a.id);
  EXPECT_FALSE(after.enabled);
  EXPECT_NE(after.paused_reason.find("5 consecutive failed runs"), std::string::npos);
  EXPECT_EQ(after.version, 2);
  now_ += 10'000;
  service_.Tick(now_);
  EXPECT_EQ(runner_.started.size(), 5u);
  for (const auto& r : Runs(a.id)) EXPECT_EQ(r.trigger, "schedule");
}

TEST_F(AutomationServiceTest, AStaleVersionChangesNothing) {
  Automation a = MustCreate(2);
  auto paused = service_.SetEnabled(org_, a.id, false, 1);
  ASSERT_TRUE(paused.ok()) << paused.status().message();
  EXPECT_EQ(paused->version, 2);
  EXPECT_EQ(service_.SetEnabled(org_, a.id, true, 1).status().code(), Code::kConflict);
  EXPECT_FALSE(service_.Get(org_, a.id)->enabled);
  EXPECT_EQ(service_.SetEnabled(other_, a.id, true, 2).status().code(), Code::kNotFound);
  now_ += 60'000;
  service_.Tick(now_);
  EXPECT_TRUE(runner_.started.empty());
  auto resumed = service_.SetEnabled(org_, a.id, true, 2);
  ASSERT_TRUE(resumed.ok());
  EXPECT_GT(resumed->next_due_at, now_);
}

TEST_F(AutomationServiceTest, ALostTargetPausesItsAutomations) {
  Automation a = MustCreate(2);
  now_ += 2'000;
  service_.Tick(now_);
  runner_.End(0, AttemptEnd::Kind::kRefused, std::nullopt, kTargetNotFound);
  Automation after = *service_.Get(org_, a.id);
  EXPECT_FALSE(after.enabled);
  EXPECT_NE(after.paused_reason.find("sbx_target"), std::string::npos);
}

TEST_F(AutomationServiceTest, TriggerRunsNowWithoutShiftingTheSchedule) {
  Automation a = MustCreate(2);
  auto run = service_.Trigger(org_, a.id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->trigger, "manual");
  EXPECT_EQ(service_.Get(org_, a.id)->next_due_at, 1'002'000);
  EXPECT_EQ(service_.Trigger(other_, a.id).status().code(), Code::kNotFound);
  EXPECT_TRUE(service_.CancelRun(run->id));
  runner_.End(0, AttemptEnd::Kind::kCancelled);
  EXPECT_EQ(store_.GetRun(org_.org_id, run->id)->status, "cancelled");
}

TEST_F(AutomationServiceTest, AUsedUpBalanceSkipsRunsAsQuotaWithoutCountingFailures) {
  bool broke = true;
  service_.set_run_admission([&](const std::string& org_id) {
    EXPECT_EQ(org_id, org_.org_id);
    if (!broke) return Status::Ok();
    return Status(Code::kPaymentRequired, "the organization's prepaid balance is 0");
  });
  Automation a = MustCreate(1);
  for (int i = 0; i < 6; ++i) {
    now_ += 1'000;
    service_.Tick(now_);
  }
  auto manual = service_.Trigger(org_, a.id);
  ASSERT_TRUE(manual.ok()) << manual.status().message();
  EXPECT_EQ(manual->status, "skipped_quota");
  EXPECT_TRUE(runner_.started.empty());
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 7u);
  for (const auto& r : runs) {
    EXPECT_EQ(r.status, "skipped_quota");
    EXPECT_NE(r.error.find("balance"), std::string::npos) << r.error;
    EXPECT_GT(r.ended_at, 0);
  }
  // Six skipped slots are not six failures: the automation stays enabled and runs once paid.
  Automation after = *service_.Get(org_, a.id);
  EXPECT_TRUE(after.enabled);
  EXPECT_EQ(after.consecutive_failures, 0);
  broke = false;
  now_ += 1'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 1u);
  runner_.End(0, AttemptEnd::Kind::kExited, 0);
  EXPECT_EQ(Runs(a.id).at(0).status, "succeeded");
}

TEST_F(AutomationServiceTest, SkippedSlotsKeepTheRunHistoryToItsNewestHundred) {
  service_.set_run_admission([](const std::string&) {
    return Status(Code::kPaymentRequired, "the organization's prepaid balance is 0");
  });
  Automation a = MustCreate(1);
  std::string first;
  for (int i = 0; i < 130; ++i) {
    now_ += 1'000;
    service_.Tick(now_);
    if (i == 0) first = Runs(a.id).at(0).id;
  }
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(service_.Trigger(org_, a.id).ok());
  // No run ever ended (none started), yet the skipped ones are pruned as they are written.
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 100u);
  EXPECT_EQ(runs.front().trigger, "manual");
  EXPECT_EQ(runs.back().trigger, "schedule");
  EXPECT_EQ(store_.GetRun(org_.org_id, first).status().code(), Code::kNotFound);
  EXPECT_TRUE(runner_.started.empty());
}

}  // namespace
}  // namespace adapt::core
