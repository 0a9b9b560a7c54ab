// SandboxLifecycle over a MemoryStore and a FakeRuntime: the state machine's transitions and
// what Reconcile decides after a crash, for each state a sandbox can be left in.
#include "core/sandbox_lifecycle.h"

#include <gtest/gtest.h>

#include <csignal>

#include "core/core_test_fixture.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

class SandboxLifecycleTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
    lifecycle_->SetEndHook([this](const std::string& id, const std::string& why, bool own) {
      ended_.push_back({id, why, own});
    });
  }

  struct Ended {
    std::string id, why;
    bool on_its_own;
  };
  std::unique_ptr<SandboxLifecycle> lifecycle_;
  std::vector<Ended> ended_;
};

TEST_F(SandboxLifecycleTest, ProvisionLaunchesTheSandboxAndRecordsItRunning) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  auto launched = runtime_.Get(r.id);
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->request.spec.cpu, 1);
  EXPECT_EQ(launched->request.spec.memory_mib, 512u);
  EXPECT_TRUE(launched->request.network_none);
  EXPECT_EQ(launched->request.image_rootfs, dir_ + "/images/test-image/rootfs");
  auto events = store_.ListEvents(org_, r.id, 0, 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[1].status, "running");
}

TEST_F(SandboxLifecycleTest, AFailedLaunchFailsTheSandboxWithTheRuntimesErrorAndReleasesIt) {
  auto r = Insert(NewSandbox());
  runtime_.FailNext(Op::kLaunch, Internal("runsc create: no space left on device"));
  lifecycle_->Provision(r.id);
  auto stored = Stored(r.id);
  EXPECT_EQ(stored.status, "failed");
  EXPECT_EQ(stored.error, "runsc create: no space left on device");
  EXPECT_EQ(stored.termination_reason, "failed");
  // Whatever the launch left is released, the disk kept for the record.
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy, r.id), 1);
  EXPECT_TRUE(runtime_.calls().back().keep_disk);
}

TEST_F(SandboxLifecycleTest, AFailureTheStoreCouldNotRecordIsWrittenOnceItCan) {
  auto r = Insert(NewSandbox());
  runtime_.FailNext(Op::kLaunch, Internal("runsc create: exit status 1"));
  store_.FailWrites(Internal("database or disk is full"));
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "provisioning");
  lifecycle_->RetryUnrecordedFailures();  // the disk is still full
  EXPECT_EQ(StatusOf(r.id), "provisioning");
  store_.FailWrites(std::nullopt);
  lifecycle_->RetryUnrecordedFailures();
  EXPECT_EQ(StatusOf(r.id), "failed");
  EXPECT_EQ(Stored(r.id).error, "runsc create: exit status 1");
}

TEST_F(SandboxLifecycleTest, AnUnknownImageFailsTheSandboxWithoutLaunching) {
  auto r = Insert(NewSandbox());
  std::filesystem::remove_all(dir_ + "/images");  // the image is gone from this host
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "failed");
  EXPECT_NE(Stored(r.id).error.find(testing_support::kTestImage), std::string::npos);
  EXPECT_EQ(runtime_.CountCalls(Op::kLaunch), 0);
}

// An endpoint made while the sandbox provisioned (the store allows one until the sandbox's
// status changes) goes with a failure that released nothing: the release hook runs once the
// failure is recorded, and sees the status it recorded.
TEST_F(SandboxLifecycleTest, AFailureBeforeTheLaunchStillRunsTheReleaseHookAfterItIsRecorded) {
  auto r = Insert(NewSandbox());
  std::vector<std::string> seen;
  lifecycle_->SetReleaseHook([&](const std::string& id) { seen.push_back(StatusOf(id)); });
  std::filesystem::remove_all(dir_ + "/images");
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "failed");
  ASSERT_FALSE(seen.empty()) << "no release hook ran";
  EXPECT_EQ(seen.back(), "failed");
}

TEST_F(SandboxLifecycleTest, ProvisionLeavesASandboxThatIsNoLongerProvisioningAlone) {
  auto r = Insert(NewSandbox("deleting"));
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "deleting");
  EXPECT_EQ(runtime_.CountCalls(Op::kLaunch), 0);
}

TEST_F(SandboxLifecycleTest, AStartupCommandThatExitsZeroCompletesTheSandbox) {
  auto r = Insert(NewSandbox("provisioning", /*startup=*/true));
  lifecycle_->Provision(r.id);
  ASSERT_EQ(StatusOf(r.id), "running");
  lifecycle_->CheckRunning(r.id);  // still running: nothing changes
  EXPECT_EQ(StatusOf(r.id), "running");
  runtime_.Exit(r.id, 0);
  lifecycle_->CheckRunning(r.id);
  auto stored = Stored(r.id);
  EXPECT_EQ(stored.status, "completed");
  EXPECT_EQ(stored.termination_reason, "completed");
  EXPECT_TRUE(stored.error.empty());
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_TRUE(ended_[0].on_its_own);
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy, r.id), 1);
  EXPECT_TRUE(runtime_.Has(r.id));  // its disk stays until deletion
}

TEST_F(SandboxLifecycleTest, AStartupCommandThatFailsFailsTheSandbox) {
  auto r = Insert(NewSandbox("provisioning", /*startup=*/true));
  lifecycle_->Provision(r.id);
  runtime_.Exit(r.id, 3);
  lifecycle_->CheckRunning(r.id);
  EXPECT_EQ(StatusOf(r.id), "failed");
  EXPECT_EQ(Stored(r.id).termination_reason, "failed");
}

TEST_F(SandboxLifecycleTest, AnInteractiveSandboxThatStopsHasFailedAndSaysHow) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  runtime_.Exit(r.id, 0, SIGKILL);
  lifecycle_->CheckRunning(r.id);
  auto stored = Stored(r.id);
  EXPECT_EQ(stored.status, "failed");
  EXPECT_EQ(stored.error, "the sandbox stopped unexpectedly (SIGKILL)");
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].why, stored.error);
}

TEST_F(SandboxLifecycleTest, TheOutOfMemoryKillerIsNamedAsTheCause) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  runtime_.Exit(r.id, 0, SIGKILL, /*oom_killed=*/true);
  lifecycle_->CheckRunning(r.id);
  EXPECT_NE(Stored(r.id).error.find("ran out of memory"), std::string::npos);
}

TEST_F(SandboxLifecycleTest, AMonitorThatVanishesWithoutAnExitStatusFailsTheSandbox) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  runtime_.LoseMonitor(r.id);
  lifecycle_->CheckRunning(r.id);
  EXPECT_EQ(StatusOf(r.id), "failed");
  EXPECT_EQ(Stored(r.id).error,
            "the sandbox's monitor exited without an exit status; the outcome is unknown");
}

TEST_F(SandboxLifecycleTest, DeleteMarksDeletingThenTearsEverythingDown) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  auto begun = lifecycle_->BeginDelete(org_, r.id, "deleted");
  ASSERT_TRUE(begun.ok()) << begun.status().message();
  EXPECT_EQ(StatusOf(r.id), "deleting");
  EXPECT_EQ(Stored(r.id).termination_reason, "deleted");
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_FALSE(ended_[0].on_its_own);
  lifecycle_->FinishDelete(r.id);
  auto stored = Stored(r.id);
  EXPECT_EQ(stored.status, "deleted");
  EXPECT_TRUE(stored.deleted_at.has_value());
  EXPECT_FALSE(runtime_.Has(r.id));  // disk and all
}

TEST_F(SandboxLifecycleTest, DeletionRevokesTheSandboxsStorageTokensOnly) {
  auto r = Insert(NewSandbox());
  auto other = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  auto token = [this](const std::string& id, const std::string& sandbox_id) {
    store::StorageTokenRecord t;
    t.id = id;
    t.org_id = org_;
    t.sandbox_id = sandbox_id;
    t.name = "t";
    t.created_at = NowMillis();
    t.expires_at = t.created_at + 3600 * 1000;
    EXPECT_TRUE(store_.PutStorageToken(t).ok());
  };
  token("stk_ofthesandbox1", r.id);
  token("stk_ofthesandbox2", r.id);
  token("stk_ofanothersbx1", other.id);
  token("stk_oftheorgonly1", "");
  ASSERT_TRUE(lifecycle_->BeginDelete(org_, r.id, "expired").ok());
  lifecycle_->FinishDelete(r.id);
  ASSERT_EQ(StatusOf(r.id), "deleted");
  for (const char* id : {"stk_ofthesandbox1", "stk_ofthesandbox2"})
    EXPECT_NE(store_.GetStorageToken(id)->revoked_at, 0) << id;
  for (const char* id : {"stk_ofanothersbx1", "stk_oftheorgonly1"})
    EXPECT_EQ(store_.GetStorageToken(id)->revoked_at, 0) << id;
}

TEST_F(SandboxLifecycleTest, DeletingAnotherOrganizationsSandboxIsNotFound) {
  auto r = Insert(NewSandbox());
  auto begun = lifecycle_->BeginDelete("org_other", r.id, "deleted");
  EXPECT_EQ(begun.status().code(), Code::kNotFound);
  EXPECT_EQ(StatusOf(r.id), "provisioning");
}

TEST_F(SandboxLifecycleTest, ATeardownThatFailsLeavesTheSandboxDeletingForARetry) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  ASSERT_TRUE(lifecycle_->BeginDelete(org_, r.id, "deleted").ok());
  runtime_.FailNext(Op::kDestroy, Internal("umount: device busy"));
  lifecycle_->FinishDelete(r.id);
  EXPECT_EQ(StatusOf(r.id), "deleting");
  lifecycle_->FinishDelete(r.id);
  EXPECT_EQ(StatusOf(r.id), "deleted");
}

TEST_F(SandboxLifecycleTest, ATransitionFromAnUnexpectedStatusIsAConflict) {
  auto r = Insert(NewSandbox("running"));
  r.status = "completed";
  EXPECT_EQ(lifecycle_->Transition(r, {"provisioning"}).code(), Code::kConflict);
  EXPECT_EQ(StatusOf(r.id), "running");
}

// Reconcile: what a restarted adaptd finds, state by state.

TEST_F(SandboxLifecycleTest, ReconcileAdoptsAProvisioningSandboxWhoseWorkloadRuns) {
  auto r = Insert(NewSandbox("provisioning"));
  runtime_.AddRunning(r.id);  // launched just before the crash; its shim outlived adaptd
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy), 0);
}

TEST_F(SandboxLifecycleTest, ReconcileFailsAndCleansUpAHalfMadeSandbox) {
  auto r = Insert(NewSandbox("provisioning"));
  runtime_.AddStopped(r.id);  // its files were made, nothing runs
  lifecycle_->Reconcile();
  auto stored = Stored(r.id);
  EXPECT_EQ(stored.status, "failed");
  EXPECT_EQ(stored.error, "adaptd restarted while the sandbox was being provisioned");
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy, r.id), 1);
  EXPECT_FALSE(runtime_.Running(r.id));
}

TEST_F(SandboxLifecycleTest, ReconcileFailsAProvisioningSandboxTheRuntimeNeverSaw) {
  auto r = Insert(NewSandbox("provisioning"));
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "failed");
}

TEST_F(SandboxLifecycleTest, ReconcileKeepsARunningSandboxThatStillRuns) {
  auto r = Insert(NewSandbox("running"));
  runtime_.AddRunning(r.id);
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy), 0);
}

TEST_F(SandboxLifecycleTest, ReconcileRecordsTheEndOfARunningSandboxThatEndedWhileAway) {
  auto r = Insert(NewSandbox("running", /*startup=*/true));
  runtime_.AddRunning(r.id);
  runtime_.Exit(r.id, 0);
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "completed");
}

TEST_F(SandboxLifecycleTest, ReconcileFailsARunningSandboxTheRuntimeLost) {
  auto r = Insert(NewSandbox("running"));
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "failed");
}

TEST_F(SandboxLifecycleTest, ReconcileFinishesAnInterruptedDelete) {
  auto r = Insert(NewSandbox("deleting"));
  runtime_.AddRunning(r.id);
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "deleted");
  EXPECT_FALSE(runtime_.Has(r.id));
}

TEST_F(SandboxLifecycleTest, ReconcileReleasesComputeAnEndedSandboxStillHoldsButKeepsItsDisk) {
  auto r = Insert(NewSandbox("completed"));
  runtime_.AddRunning(r.id);
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "completed");
  EXPECT_FALSE(runtime_.Running(r.id));
  EXPECT_TRUE(runtime_.Has(r.id));
}

TEST_F(SandboxLifecycleTest, ReconcileRemovesRuntimeLeftoversTheStoreDoesNotKnowOrHasDeleted) {
  std::string unknown = NewId("sbx");
  runtime_.AddRunning(unknown);
  auto gone = Insert(NewSandbox("deleted"));
  runtime_.AddStopped(gone.id);
  runtime_.AddStopped("not-a-sandbox-id");  // not ours to remove
  lifecycle_->Reconcile();
  EXPECT_FALSE(runtime_.Has(unknown));
  EXPECT_FALSE(runtime_.Has(gone.id));
  EXPECT_TRUE(runtime_.Has("not-a-sandbox-id"));
}

}  // namespace
}  // namespace adapt::core
