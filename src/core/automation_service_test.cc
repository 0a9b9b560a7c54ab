// AutomationService's scheduling decisions over a MemoryStore, a fake clock and a runner the
// test scripts: when a slot fires, what overlap, catch-up, failures and versions do.
#include "core/automation_service.h"

#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

class ScriptedRunner : public AutomationRunner {
 public:
  struct Started {
    store::AutomationRecord automation;
    store::RunRecord run;
    JobAttempts::Done done;
    bool ended = false;
    bool reattached = false;
  };

  Status CheckTarget(const std::string& org_id, const std::string& sandbox_id) override {
    // An empty org_id: any organization's (the deleted-target watch asks so).
    if ((org_id.empty() || org_id == target_org) && sandbox_id == target) return Status::Ok();
    return NotFound("sandbox '" + sandbox_id + "' not found");
  }
  void Start(const store::AutomationRecord& a, const store::RunRecord& run, JobAttempts::Progress,
             JobAttempts::Done done) override {
    started.push_back({a, run, std::move(done)});
  }
  void Reattach(const store::AutomationRecord& a, const store::RunRecord& run,
                JobAttempts::Done done) override {
    started.push_back({a, run, std::move(done), false, true});
  }
  bool Cancel(const std::string& run_id) override {
    for (auto& s : started)
      if (s.run.id == run_id && !s.ended) {
        cancelled.push_back(run_id);
        return true;
      }
    return false;
  }
  Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id) override {
    if (org_id != target_org || sandbox_id != target) return NotFound("sandbox gone");
    if (durable) return Conflict("sandbox '" + sandbox_id + "' is durable");
    replaced.push_back(sandbox_id);
    target = "sbx_fresh" + std::to_string(replaced.size());
    return target;
  }
  void Discard(const std::string&, const std::string& sandbox_id) override {
    discarded.push_back(sandbox_id);
  }
  void End(size_t i, AttemptEnd::Kind kind, std::optional<int> exit_code = std::nullopt,
           std::string error = "", std::string out = "") {
    ASSERT_LT(i, started.size());
    ASSERT_FALSE(started[i].ended);
    started[i].ended = true;
    AttemptEnd end;
    end.kind = kind;
    end.exit_code = exit_code;
    end.error = std::move(error);
    end.stdout_text = std::move(out);
    // Moved out first: a retry's Start appends to `started` while `done` runs.
    auto done = std::move(started[i].done);
    done(std::move(end));
  }

  std::string target_org, target = "sbx_target";
  std::vector<Started> started;
  std::vector<std::string> cancelled;
  std::vector<std::string> replaced, discarded;
  bool durable = false;
};

class AutomationServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    org_.org_id = store_.CreateOrg({NewId("org"), "acme", false, NowMillis()})->id;
    other_.org_id = store_.CreateOrg({NewId("org"), "other", false, NowMillis()})->id;
    runner_.target_org = org_.org_id;
  }

  Automation MustCreate(int64_t interval = 2, std::string overlap = "") {
    CreateAutomationRequest req;
    req.sandbox_id = "sbx_target";
    req.argv = {"/bin/sh", "-c", "date"};
    req.interval_seconds = interval;
    req.overlap = std::move(overlap);
    auto a = service_.Create(org_, req);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return *a;
  }
  // The slot's run as a previous adaptd left it: its command started in `sandbox_id`.
  store::RunRecord LeaveRunning(size_t i, const std::string& command_id) {
    store::RunRecord run = *store_.GetRun(org_.org_id, runner_.started.at(i).run.id);
    run.status = "running";
    run.command_id = command_id;
    EXPECT_TRUE(store_.PutRun(run).ok());
    return run;
  }
  std::vector<store::RunRecord> Runs(const std::string& automation_id) {
    auto page = store_.ListRuns(org_.org_id, {"", automation_id}, 200, std::nullopt);
    return page.ok() ? page->items : std::vector<store::RunRecord>{};  // newest first
  }

  int64_t now_ = 1'000'000;
  store::MemoryStore store_;
  ScriptedRunner runner_;
  AutomationService service_{store_, store_, runner_, [this] { return now_; }};
  Principal org_, other_;
};

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
  EXPECT_TRUE(service_.List(org_)->empty());
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

TEST_F(AutomationServiceTest, AnInfrastructureFailureRetriesInAFreshSandboxTheAutomationFollows) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 1u);
  runner_.End(0, AttemptEnd::Kind::kInfrastructure, std::nullopt, "the sandbox died");
  // Attempt 2 runs at once in a replacement, for the same slot; the old target is discarded.
  ASSERT_EQ(runner_.started.size(), 2u);
  EXPECT_EQ(runner_.replaced, std::vector<std::string>{"sbx_target"});
  EXPECT_EQ(runner_.discarded, std::vector<std::string>{"sbx_target"});
  const store::RunRecord& retry = runner_.started[1].run;
  EXPECT_EQ(retry.trigger, "retry");
  EXPECT_EQ(retry.attempt, 2);
  EXPECT_EQ(retry.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(retry.scheduled_at, runner_.started[0].run.scheduled_at);
  EXPECT_EQ(runner_.started[1].automation.sandbox_id, "sbx_fresh1");
  Automation moved = *service_.Get(org_, a.id);
  EXPECT_EQ(moved.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(moved.version, 2);
  EXPECT_TRUE(moved.enabled);
  runner_.End(1, AttemptEnd::Kind::kExited, 0);
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].status, "infrastructure_failed");
  EXPECT_EQ(runs[1].sandbox_id, "sbx_target");
  EXPECT_EQ(runs[1].attempt, 1);
  EXPECT_EQ(runs[0].status, "succeeded");
  EXPECT_EQ(runs[0].attempt, 2);
  EXPECT_EQ(service_.Get(org_, a.id)->consecutive_failures, 0);
  // The next slot runs in the new sandbox.
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 3u);
  EXPECT_EQ(runner_.started[2].run.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(runner_.started[2].run.attempt, 1);
}

TEST_F(AutomationServiceTest, RetriesStopAtMaxAttemptsAndCountAsOneFailedSlot) {
  CreateAutomationRequest req;
  req.sandbox_id = "sbx_target";
  req.argv = {"true"};
  req.interval_seconds = 60;
  req.max_attempts = 2;
  Automation a = *service_.Create(org_, req);
  EXPECT_EQ(a.max_attempts, 2);
  now_ += 60'000;
  service_.Tick(now_);
  runner_.End(0, AttemptEnd::Kind::kInfrastructure);
  ASSERT_EQ(runner_.started.size(), 2u);
  runner_.End(1, AttemptEnd::Kind::kInfrastructure);
  EXPECT_EQ(runner_.started.size(), 2u);
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, "infrastructure_failed");
  EXPECT_EQ(runs[0].attempt, 2);
  EXPECT_EQ(service_.Get(org_, a.id)->consecutive_failures, 1);
  // Out of range: refused, naming the field.
  for (int64_t bad : {0, 11}) {
    req.max_attempts = bad;
    EXPECT_EQ(service_.Create(org_, req).status().field(), "max_attempts") << bad;
  }
}

TEST_F(AutomationServiceTest, ANonZeroExitOrADurableTargetIsNotRetried) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  runner_.End(0, AttemptEnd::Kind::kExited, 3);
  runner_.durable = true;
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 2u);
  runner_.End(1, AttemptEnd::Kind::kInfrastructure);
  EXPECT_EQ(runner_.started.size(), 2u);
  EXPECT_TRUE(runner_.replaced.empty());
  EXPECT_EQ(service_.Get(org_, a.id)->sandbox_id, "sbx_target");
  EXPECT_EQ(service_.Get(org_, a.id)->consecutive_failures, 2);
}

TEST_F(AutomationServiceTest, TwoRunsFailingOnOneTargetMakeOneReplacement) {
  Automation a = MustCreate(60, "allow");
  Automation b = MustCreate(60, "allow");
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 2u);
  runner_.End(0, AttemptEnd::Kind::kInfrastructure);
  runner_.End(1, AttemptEnd::Kind::kInfrastructure);
  ASSERT_EQ(runner_.started.size(), 4u);
  EXPECT_EQ(runner_.replaced.size(), 1u);
  EXPECT_EQ(runner_.started[2].run.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(runner_.started[3].run.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(service_.Get(org_, a.id)->sandbox_id, "sbx_fresh1");
  EXPECT_EQ(service_.Get(org_, b.id)->sandbox_id, "sbx_fresh1");
}

TEST_F(AutomationServiceTest, ADeletedTargetSeenOnTheBusPausesOnlyItsAutomations) {
  Automation gone = MustCreate(60);
  runner_.target = "sbx_kept";
  CreateAutomationRequest req;
  req.sandbox_id = "sbx_kept";
  req.argv = {"true"};
  req.interval_seconds = 60;
  Automation kept = *service_.Create(org_, req);
  EventBus bus;
  boost::asio::thread_pool workers(1);
  service_.WatchTargets(bus, workers);
  bus.Notify({Change::Kind::kSandboxStatus, "sbx_target"});
  bus.Notify({Change::Kind::kSandboxStatus, "sbx_kept"});
  workers.join();
  Automation paused = *service_.Get(org_, gone.id);
  EXPECT_FALSE(paused.enabled);
  EXPECT_NE(paused.paused_reason.find("'sbx_target' was deleted"), std::string::npos)
      << paused.paused_reason;
  EXPECT_TRUE(service_.Get(org_, kept.id)->enabled);
  service_.Shutdown();
}

TEST_F(AutomationServiceTest, DeleteLeavesRunsAndOtherOrganizationsGetNotFound) {
  Automation a = MustCreate(2);
  EXPECT_EQ(service_.Delete(other_, a.id).code(), Code::kNotFound);
  ASSERT_TRUE(service_.Delete(org_, a.id).ok());
  EXPECT_EQ(service_.Get(org_, a.id).status().code(), Code::kNotFound);
}

TEST_F(AutomationServiceTest, RecoveryReattachesARunWhoseCommandStartedAndRecordsItsEnd) {
  Automation a = MustCreate(60);
  Automation b = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 2u);
  size_t of_a = runner_.started[0].automation.id == a.id ? 0 : 1;
  store::RunRecord running = LeaveRunning(of_a, "cmd_1");
  std::string starting = runner_.started[1 - of_a].run.id;  // its sandbox was still booting

  // A new adaptd over the same store.
  ScriptedRunner after;
  after.target_org = org_.org_id;
  AutomationService restarted{store_, store_, after, [this] { return now_; }};
  restarted.Recover();
  ASSERT_EQ(after.started.size(), 1u);
  EXPECT_TRUE(after.started[0].reattached);
  EXPECT_EQ(after.started[0].run.id, running.id);
  EXPECT_EQ(after.started[0].run.command_id, "cmd_1");
  EXPECT_EQ(after.started[0].run.sandbox_id, "sbx_target");
  EXPECT_EQ(store_.GetRun(org_.org_id, running.id)->status, "running");
  auto failed = store_.GetRun(org_.org_id, starting);
  EXPECT_EQ(failed->status, "infrastructure_failed");
  EXPECT_NE(failed->error.find("adaptd restarted"), std::string::npos) << failed->error;

  // Still executing: the next slot of a meets the overlap policy (skip).
  now_ += 60'000;
  restarted.Tick(now_);
  ASSERT_EQ(after.started.size(), 2u);
  EXPECT_EQ(after.started[1].automation.id, b.id);
  EXPECT_EQ(Runs(a.id).at(0).status, "skipped_overlap");

  after.End(0, AttemptEnd::Kind::kExited, 0, "", "done\n");
  auto ended = store_.GetRun(org_.org_id, running.id);
  EXPECT_EQ(ended->status, "succeeded");
  EXPECT_EQ(ended->exit_code, 0);
  EXPECT_EQ(ended->stdout_text, "done\n");
  EXPECT_EQ(ended->command_id, "cmd_1");
  EXPECT_GT(ended->ended_at, 0);
  EXPECT_EQ(restarted.Get(org_, a.id)->consecutive_failures, 0);
  // Its end frees the automation: the next slot runs.
  now_ += 60'000;
  restarted.Tick(now_);
  ASSERT_EQ(after.started.size(), 3u);
  EXPECT_EQ(after.started[2].automation.id, a.id);
  EXPECT_FALSE(after.started[2].reattached);
}

TEST_F(AutomationServiceTest, AReattachedRunWhoseCommandWasLostIsRetriedInAFreshSandbox) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  store::RunRecord running = LeaveRunning(0, "cmd_1");
  ScriptedRunner after;
  after.target_org = org_.org_id;
  AutomationService restarted{store_, store_, after, [this] { return now_; }};
  restarted.Recover();
  ASSERT_EQ(after.started.size(), 1u);
  after.End(0, AttemptEnd::Kind::kInfrastructure, std::nullopt,
            "adaptd restarted while the command ran and the sandbox's agent no longer runs it");
  EXPECT_EQ(store_.GetRun(org_.org_id, running.id)->status, "infrastructure_failed");
  ASSERT_EQ(after.started.size(), 2u);
  EXPECT_FALSE(after.started[1].reattached);
  EXPECT_EQ(after.started[1].run.trigger, "retry");
  EXPECT_EQ(after.started[1].run.attempt, 2);
  EXPECT_EQ(after.started[1].run.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(restarted.Get(org_, a.id)->sandbox_id, "sbx_fresh1");
}

TEST_F(AutomationServiceTest, AReattachedRunCanBeCancelled) {
  MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  store::RunRecord running = LeaveRunning(0, "cmd_1");
  ScriptedRunner after;
  after.target_org = org_.org_id;
  AutomationService restarted{store_, store_, after, [this] { return now_; }};
  restarted.Recover();
  EXPECT_TRUE(restarted.CancelRun(running.id));
  EXPECT_EQ(after.cancelled, std::vector<std::string>{running.id});
  // The runner reports the command's end after the SIGTERM (or the SIGKILL) as cancelled.
  after.End(0, AttemptEnd::Kind::kCancelled, std::nullopt, "cancelled");
  auto ended = store_.GetRun(org_.org_id, running.id);
  EXPECT_EQ(ended->status, "cancelled");
  EXPECT_EQ(after.started.size(), 1u);
}

TEST_F(AutomationServiceTest, AReattachedRunOfADeletedAutomationEndsAndIsNotRetried) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  store::RunRecord running = LeaveRunning(0, "cmd_1");
  ASSERT_TRUE(service_.Delete(org_, a.id).ok());
  ScriptedRunner after;
  after.target_org = org_.org_id;
  AutomationService restarted{store_, store_, after, [this] { return now_; }};
  restarted.Recover();
  ASSERT_EQ(after.started.size(), 1u);
  after.End(0, AttemptEnd::Kind::kInfrastructure, std::nullopt, "the sandbox is gone");
  EXPECT_EQ(store_.GetRun(org_.org_id, running.id)->status, "infrastructure_failed");
  EXPECT_EQ(after.started.size(), 1u);
  EXPECT_TRUE(after.replaced.empty());
}

}  // namespace
}  // namespace adapt::core
