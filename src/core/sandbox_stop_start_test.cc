// SandboxLifecycle's stop and start over a MemoryStore and a FakeRuntime: what each kind of
// sandbox keeps, and what Reconcile does with a stop or start a crash interrupted.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/core_test_fixture.h"
#include "core/file_transfers.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_lifecycle.h"
#include "core/sandbox_operations.h"

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

TEST_F(SandboxStopStartTest, AStopEndsTheFileTransfersInFlightAndSavesTheProcesses) {
  // A download not read on held its tool, and its connection, in the sandbox: the stop waited
  // 5 s and its save then failed on the connection, the processes lost.
  FileTransfers transfers;
  lifecycle_->set_file_transfers(&transfers, std::chrono::seconds(30));
  auto r = Running(/*durable=*/true);
  auto other = Running(/*durable=*/true);
  FileTransfers::Hold download = transfers.Begin(r.id);
  FileTransfers::Hold elsewhere = transfers.Begin(other.id);
  std::vector<std::string> asked;
  download.OnCancel([&](std::chrono::milliseconds wait) {
    EXPECT_GT(wait.count(), 0);
    asked.push_back(r.id);
    return true;  // the tool ended; adaptd's side of the transfer still winds down
  });
  elsewhere.OnCancel([&](std::chrono::milliseconds) {
    asked.push_back(other.id);
    return true;
  });
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  EXPECT_EQ(asked, std::vector<std::string>{r.id});
  EXPECT_TRUE(ReadHibernation(Stored(r.id)).processes_saved);
  EXPECT_EQ(transfers.InFlight(r.id), 1);  // counted until its handler lets go
}

TEST_F(SandboxStopStartTest, AStopWaitsForATransferItCannotSeeEnd) {
  FileTransfers transfers;
  lifecycle_->set_file_transfers(&transfers, std::chrono::milliseconds(200));
  auto r = Running(/*durable=*/true);
  {
    // Not started yet, so nothing to cancel: the stop waits for its count, then goes on.
    FileTransfers::Hold starting = transfers.Begin(r.id);
    ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  }
  EXPECT_EQ(ReadHibernation(Stored(r.id)).phase, HibernationPhase::kStopped);
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, r.id), 1);
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

TEST_F(SandboxStopStartTest, AStopIsACheckpointOperationAndAStartARestoreOperation) {
  auto r = Running(/*durable=*/true);
  std::string checkpoint;
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id, false, &checkpoint).ok());
  auto op = store_.GetOperation(org_, checkpoint);
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_EQ(op->kind, "checkpoint");
  EXPECT_EQ(op->sandbox_id, r.id);
  EXPECT_EQ(op->phase, "Completed");
  EXPECT_NE(op->finished_at, 0);

  std::string restore;
  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id, {}, &restore).ok());
  EXPECT_EQ(store_.GetOperation(org_, restore)->phase, "Pending");
  lifecycle_->Provision(r.id);
  op = store_.GetOperation(org_, restore);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->kind, "restore");
  EXPECT_EQ(op->phase, "Completed");
  EXPECT_TRUE(op->error.empty());
}

TEST_F(SandboxStopStartTest, AFailedCheckpointIsAFailedOperationWithTheHibernationNote) {
  auto r = Running(/*durable=*/true);
  runtime_.FailNext(Op::kCheckpoint, Internal("encoding error at object tcp.endpoint"));
  std::string checkpoint;
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id, false, &checkpoint).ok());
  auto op = store_.GetOperation(org_, checkpoint);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->phase, "Failed");
  EXPECT_EQ(op->error, ReadHibernation(Stored(r.id)).note);
  EXPECT_NE(op->error.find("tcp.endpoint"), std::string::npos);
}

TEST_F(SandboxStopStartTest, ARestoreThatFallsBackToAFreshBootIsAFailedOperation) {
  auto r = Running(/*durable=*/true);
  ASSERT_TRUE(lifecycle_->Stop(org_, r.id).ok());
  std::string restore;
  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id, {}, &restore).ok());
  runtime_.FailNext(Op::kLaunch, Internal("runsc restore: bad image"));
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "running");
  auto op = store_.GetOperation(org_, restore);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->phase, "Failed");
  EXPECT_NE(op->error.find("bad image"), std::string::npos);
  EXPECT_NE(op->error.find("afresh"), std::string::npos);
}

TEST_F(SandboxStopStartTest, ReconcileFailsOperationsWhoseTransitionACrashKeptFromBeingWritten) {
  auto running = Running(/*durable=*/true);
  auto stopped = Running(/*durable=*/true);
  ASSERT_TRUE(lifecycle_->Stop(org_, stopped.id).ok());
  // Operations written just before a crash, their transitions not.
  auto checkpoint = BeginSandboxOperation(store_, org_, running.id, "checkpoint", "Running");
  auto restore = BeginSandboxOperation(store_, org_, stopped.id, "restore", "Pending");
  ASSERT_TRUE(checkpoint.ok() && restore.ok());
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(running.id), "running");
  EXPECT_EQ(StatusOf(stopped.id), "hibernated");
  auto op = store_.GetOperation(org_, *checkpoint);
  EXPECT_EQ(op->phase, "Failed");
  EXPECT_NE(op->error.find("still running"), std::string::npos);
  op = store_.GetOperation(org_, *restore);
  EXPECT_EQ(op->phase, "Failed");
  EXPECT_NE(op->error.find("hibernated"), std::string::npos);
}

TEST_F(SandboxStopStartTest, ReconcileSettlesTheOperationsOfAnInterruptedStopAndStart) {
  auto stopping = Running(/*durable=*/true);
  auto starting = Running(/*durable=*/true);
  ASSERT_TRUE(lifecycle_->Stop(org_, starting.id).ok());
  std::string restore;
  ASSERT_TRUE(lifecycle_->BeginStart(org_, starting.id, {}, &restore).ok());
  // A stop written (phase stopping, its operation Running) whose checkpoint never ran.
  auto checkpoint = BeginSandboxOperation(store_, org_, stopping.id, "checkpoint", "Running");
  ASSERT_TRUE(checkpoint.ok());
  auto next = Stored(stopping.id);
  next.status = "hibernated";
  Hibernation h;
  h.phase = HibernationPhase::kStopping;
  h.workspace_kept = true;
  WriteHibernation(next, h);
  ASSERT_TRUE(lifecycle_->Transition(next, {"running"}).ok());

  lifecycle_->Reconcile();
  EXPECT_EQ(store_.GetOperation(org_, *checkpoint)->phase, "Completed");  // finished now
  EXPECT_EQ(store_.GetOperation(org_, restore)->phase, "Failed");         // undone
  EXPECT_TRUE(store_.ListAllOpenOperations()->empty());
}

}  // namespace
}  // namespace adapt::core
