// AutomationService when runs fail for reasons of the infrastructure: retries in a fresh
// sandbox, a target deleted or gone, and the runs a previous adaptd left executing.
#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>
#include <string>
#include <vector>

#include "core/automation_service.h"
#include "core/automation_service_fixture.h"
#include "core/event_bus.h"

namespace adapt::core {
namespace {

using testing_support::AutomationServiceTest;
using testing_support::ScriptedRunner;

TEST_F(AutomationServiceTest, AnInfrastructureFailureRetriesInAFreshSandboxTheAutomationFollows) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 1u);
  runner_.End(0, AttemptEnd::Kind::kInfrastructure, std::nullopt, "the sandbox died");
  // Attempt 2 runs at once in a replacement, for the same slot; the old target is discarded.
  ASSERT_EQ(runner_.started.size(), 2u);
  EXPECT_EQ(runner_.replaced, std::vector<std::string>{"sbx_target"});
  EXPECT_EQ(runner_.replaced_for, std::vector<std::string>{a.id}) << "labelled with its automation";
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
  after_.durable = true;
  AutomationService& restarted = Restart();
  ASSERT_EQ(after_.started.size(), 1u);
  EXPECT_TRUE(after_.started[0].reattached);
  EXPECT_EQ(after_.started[0].run.id, running.id);
  EXPECT_EQ(after_.started[0].run.command_id, "cmd_1");
  EXPECT_EQ(after_.started[0].run.sandbox_id, "sbx_target");
  EXPECT_EQ(store_.GetRun(org_.org_id, running.id)->status, "running");
  auto failed = store_.GetRun(org_.org_id, starting);
  EXPECT_EQ(failed->status, "infrastructure_failed");
  EXPECT_NE(failed->error.find("adaptd restarted"), std::string::npos) << failed->error;

  // Still executing: the next slot of a meets the overlap policy (skip).
  now_ += 60'000;
  restarted.Tick(now_);
  ASSERT_EQ(after_.started.size(), 2u);
  EXPECT_EQ(after_.started[1].automation.id, b.id);
  EXPECT_EQ(Runs(a.id).at(0).status, "skipped_overlap");

  after_.End(0, AttemptEnd::Kind::kExited, 0, "", "done\n");
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
  ASSERT_EQ(after_.started.size(), 3u);
  EXPECT_EQ(after_.started[2].automation.id, a.id);
  EXPECT_FALSE(after_.started[2].reattached);
}

TEST_F(AutomationServiceTest, ARunCutBeforeItsCommandStartedIsNotRetriedOnAnInstantTarget) {
  CreateAutomationRequest req;
  req.sandbox_id = "sbx_target";
  req.argv = {"true"};
  req.interval_seconds = 60;
  req.max_attempts = 3;  // attempts left: a retry would replace the healthy target
  auto a = service_.Create(org_, req);
  ASSERT_TRUE(a.ok()) << a.status().message();
  now_ += 60'000;
  service_.Tick(now_);
  ASSERT_EQ(runner_.started.size(), 1u);
  Restart();
  EXPECT_TRUE(after_.started.empty());
  EXPECT_TRUE(after_.replaced.empty());
  EXPECT_EQ(Runs(a->id).at(0).status, "infrastructure_failed");
}

TEST_F(AutomationServiceTest, AReattachedRunWhoseCommandWasLostIsRetriedInAFreshSandbox) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  store::RunRecord running = LeaveRunning(0, "cmd_1");
  AutomationService& restarted = Restart();
  ASSERT_EQ(after_.started.size(), 1u);
  after_.End(0, AttemptEnd::Kind::kInfrastructure, std::nullopt,
             "adaptd restarted while the command ran and the sandbox's agent no longer runs it");
  EXPECT_EQ(store_.GetRun(org_.org_id, running.id)->status, "infrastructure_failed");
  ASSERT_EQ(after_.started.size(), 2u);
  EXPECT_FALSE(after_.started[1].reattached);
  EXPECT_EQ(after_.started[1].run.trigger, "retry");
  EXPECT_EQ(after_.started[1].run.attempt, 2);
  EXPECT_EQ(after_.started[1].run.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(restarted.Get(org_, a.id)->sandbox_id, "sbx_fresh1");
}

TEST_F(AutomationServiceTest, AReattachedRunCanBeCancelled) {
  MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  store::RunRecord running = LeaveRunning(0, "cmd_1");
  AutomationService& restarted = Restart();
  EXPECT_TRUE(restarted.CancelRun(running.id));
  EXPECT_EQ(after_.cancelled, std::vector<std::string>{running.id});
  // The runner reports the command's end after the SIGTERM (or the SIGKILL) as cancelled.
  after_.End(0, AttemptEnd::Kind::kCancelled, std::nullopt, "cancelled");
  auto ended = store_.GetRun(org_.org_id, running.id);
  EXPECT_EQ(ended->status, "cancelled");
  EXPECT_EQ(after_.started.size(), 1u);
}

TEST_F(AutomationServiceTest, AReattachedRunOfADeletedAutomationEndsAndIsNotRetried) {
  Automation a = MustCreate(60);
  now_ += 60'000;
  service_.Tick(now_);
  store::RunRecord running = LeaveRunning(0, "cmd_1");
  ASSERT_TRUE(service_.Delete(org_, a.id).ok());
  Restart();
  ASSERT_EQ(after_.started.size(), 1u);
  after_.End(0, AttemptEnd::Kind::kInfrastructure, std::nullopt, "the sandbox is gone");
  EXPECT_EQ(store_.GetRun(org_.org_id, running.id)->status, "infrastructure_failed");
  EXPECT_EQ(after_.started.size(), 1u);
  EXPECT_TRUE(after_.replaced.empty());
}

// A crash between a retry's replacement and the automation's follow left a running sandbox
// nothing uses; one between the follow and the delete left the target it replaced. Recovery
// deletes both, and keeps the one followed, one whose automation was deleted, one labelled
// with another organization's automation and a replaced target an automation still follows.
TEST_F(AutomationServiceTest, RecoveryDeletesTheReplacementsNoAutomationFollows) {
  Automation a = MustCreate(60);
  Automation gone = MustCreate(60);
  ASSERT_TRUE(service_.Delete(org_, gone.id).ok());
  after_.replacements = {{org_.org_id, "sbx_unfollowed", a.id, "sbx_target"},
                         {org_.org_id, "sbx_target", a.id, "sbx_old"},
                         {org_.org_id, "sbx_target", a.id, "sbx_target"},
                         {org_.org_id, "sbx_of_a_deleted_automation", gone.id, "sbx_x"},
                         {other_.org_id, "sbx_other_org", a.id, "sbx_y"}};
  Restart();
  EXPECT_EQ(after_.discarded, (std::vector<std::string>{"sbx_unfollowed", "sbx_old"}));
}

}  // namespace
}  // namespace adapt::core
