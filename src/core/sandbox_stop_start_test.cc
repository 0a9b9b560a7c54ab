// SandboxLifecycle's stop and start over a MemoryStore and a FakeRuntime: what each kind of
// sandbox keeps, and what Reconcile does with a stop or start a crash interrupted.
#include <gtest/gtest.h>

#include "core/core_test_fixture.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_lifecycle.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

class SandboxStopStartTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
  }

  // A sandbox provisioned and running.
  store::SandboxRecord Running(bool durable) {
    auto r = Insert(NewSandbox("provisioning", false, durable));
    lifecycle_->Provision(r.id);
    EXPECT_EQ(StatusOf(r.id), "running");
    return r;
  }

  HibernationPhase PhaseOf(const std::string& id) { return ReadHibernation(Stored(id)).phase; }

  std::unique_ptr<SandboxLifecycle> lifecycle_;
};

TEST_F(SandboxStopStartTest, StoppingAnInstantSandboxDiscardsItAndStartBootsItAfresh) {
  auto r = Running(/*durable=*/false);
  auto stopped = lifecycle_->Stop(org_, r.id);
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(stopped->status, "hibernated");
  EXPECT_EQ(PhaseOf(r.id), HibernationPhase::kStopped);
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint), 0);
  EXPECT_FALSE(runtime_.Has(r.id));  // its writable layer went with it

  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id).ok());
  EXPECT_EQ(StatusOf(r.id), "provisioning");
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_EQ(PhaseOf(r.id), HibernationPhase::kNone);
  EXPECT_EQ(runtime_.CountCalls(Op::kLaunch, r.id), 2);
  EXPECT_FALSE(runtime_.Get(r.id)->request.restore);
}

TEST_F(SandboxStopStartTest, StoppingADurableSandboxCheckpointsItAndStartRestoresIt) {
  auto r = Running(/*durable=*/true);
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  auto h = ReadHibernation(Stored(r.id));
  EXPECT_EQ(h.phase, HibernationPhase::kStopped);
  EXPECT_TRUE(h.workspace_kept);
  EXPECT_TRUE(h.processes_saved);
  EXPECT_TRUE(runtime_.HasCheckpoint(r.id));

  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id).ok());
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Get(r.id)->request.restore);
  EXPECT_FALSE(runtime_.HasCheckpoint(r.id));  // it has served
}

TEST_F(SandboxStopStartTest, ADurableSandboxWhoseCheckpointFailsKeepsItsFilesAndBootsAfresh) {
  auto r = Running(/*durable=*/true);
  runtime_.FailNext(Op::kCheckpoint, Internal("runsc checkpoint: unsupported socket"));
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  auto h = ReadHibernation(Stored(r.id));
  EXPECT_FALSE(h.processes_saved);
  EXPECT_NE(h.note.find("unsupported socket"), std::string::npos);
  EXPECT_TRUE(runtime_.Has(r.id));  // the disk stays

  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id).ok());
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_FALSE(runtime_.Get(r.id)->request.restore);
}

TEST_F(SandboxStopStartTest, OnlyARunningSandboxStopsAndOnlyAStoppedOneStarts) {
  auto r = Insert(NewSandbox("provisioning"));
  EXPECT_EQ(lifecycle_->Stop(org_, r.id).status().code(), Code::kConflict);
  EXPECT_EQ(lifecycle_->BeginStart(org_, r.id).status().code(), Code::kConflict);
  EXPECT_EQ(StatusOf(r.id), "provisioning");
}

TEST_F(SandboxStopStartTest, ReconcileFinishesAStopACrashInterrupted) {
  auto r = Running(/*durable=*/true);
  // What Stop wrote before the crash: hibernated, phase stopping; the sandbox still runs.
  auto next = Stored(r.id);
  next.status = "hibernated";
  Hibernation h;
  h.phase = HibernationPhase::kStopping;
  h.workspace_kept = true;
  WriteHibernation(next, h);
  ASSERT_TRUE(lifecycle_->Transition(next, {"running"}).ok());

  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "hibernated");
  EXPECT_EQ(PhaseOf(r.id), HibernationPhase::kStopped);
  EXPECT_TRUE(runtime_.HasCheckpoint(r.id));
  EXPECT_FALSE(runtime_.Running(r.id));
}

TEST_F(SandboxStopStartTest, ReconcileUndoesAStartWhoseSandboxDoesNotRun) {
  auto r = Running(/*durable=*/true);
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id).ok());
  // adaptd died before the restore: the sandbox is provisioning (phase starting), nothing runs.
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "hibernated");
  EXPECT_EQ(PhaseOf(r.id), HibernationPhase::kStopped);
  EXPECT_TRUE(runtime_.HasCheckpoint(r.id));  // a later start still restores
}

TEST_F(SandboxStopStartTest, ReconcileFinishesAStartWhoseSandboxRuns) {
  auto r = Running(/*durable=*/false);
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id).ok());
  runtime_.AddRunning(r.id);  // booted just before the crash
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_EQ(PhaseOf(r.id), HibernationPhase::kNone);
}

}  // namespace
}  // namespace adapt::core
