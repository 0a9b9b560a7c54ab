// SandboxLifecycle's named checkpoints over a MemoryStore and a FakeRuntime: taking one keeps
// the sandbox running (restored from the checkpoint it just took), rolling back reinstates
// the kept one, and a failure or a crash leaves the sandbox running, or stopped with its disk,
// never stuck.
#include <gtest/gtest.h>

#include "core/core_test_fixture.h"
#include "core/operation.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_lifecycle.h"
#include "core/sandbox_operations.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

class SandboxCheckpointsTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
  }

  store::SandboxRecord Running(bool durable = true) {
    auto r = Insert(NewSandbox("provisioning", false, durable));
    lifecycle_->Provision(r.id);
    EXPECT_EQ(StatusOf(r.id), "running");
    return r;
  }

  store::OperationRecord OperationOf(const std::string& id) {
    auto op = store_.GetOperation(org_, id);
    EXPECT_TRUE(op.ok()) << op.status().message();
    return op.ok() ? *op : store::OperationRecord{};
  }

  std::unique_ptr<SandboxLifecycle> lifecycle_;
};

TEST_F(SandboxCheckpointsTest, TakingACheckpointKeepsItAndTheSandboxRunsOnFromIt) {
  auto r = Running();
  std::string op;
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "before-upgrade", &op).ok());
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  EXPECT_TRUE(runtime_.Get(r.id)->request.restore);  // resumed from the checkpoint
  EXPECT_FALSE(runtime_.HasCheckpoint(r.id));        // only the named copy stays
  auto kept = runtime_.ListNamedCheckpoints(r.id);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].name, "before-upgrade");
  auto record = OperationOf(op);
  EXPECT_EQ(record.kind, kCheckpointOperation);
  EXPECT_EQ(record.phase, "Completed");
  EXPECT_EQ(record.bytes, kept[0].bytes);
}

TEST_F(SandboxCheckpointsTest, AFileTransferInFlightHoldsOffACheckpointAndARollBack) {
  // The chaos run of 2026-12-06: a checkpoint taken while a download ran through the agent
  // met its data connection, which this runsc cannot save, and lost the sandbox's processes.
  FileTransfers transfers;
  lifecycle_->set_file_transfers(&transfers, std::chrono::milliseconds(100));
  auto r = Running();
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
  {
    FileTransfers::Hold download = transfers.Begin(r.id);
    std::string op;
    Status st = lifecycle_->TakeNamedCheckpoint(org_, r.id, "two", &op);
    EXPECT_EQ(st.code(), Code::kConflict) << st.message();
    EXPECT_NE(st.message().find("has a file transfer in progress"), std::string::npos);
    EXPECT_EQ(OperationOf(op).phase, "Failed");
    std::string back;
    auto rolled = lifecycle_->RestoreNamedCheckpoint(org_, r.id, "one", &back);
    EXPECT_EQ(rolled.status().code(), Code::kConflict) << rolled.status().message();
    EXPECT_EQ(OperationOf(back).phase, "Failed");
    // Untouched: one checkpoint, the sandbox running from the first one's restore.
    EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, r.id), 1);
    EXPECT_EQ(runtime_.ListNamedCheckpoints(r.id).size(), 1u);
    EXPECT_TRUE(runtime_.Running(r.id));
    // Another sandbox's transfers are not this one's.
    auto other = Running();
    EXPECT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, other.id, "one", nullptr).ok());
  }
  EXPECT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "two", nullptr).ok());
}

TEST_F(SandboxCheckpointsTest, ARefusedCheckpointKeepsNothingAndBootsTheSandboxFromItsDisk) {
  auto r = Running();
  runtime_.FailNext(Op::kCheckpoint, Status(Code::kUnsupported, "a TCP connection is open"));
  std::string op;
  Status st = lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", &op);
  EXPECT_EQ(st.code(), Code::kUnsupported);
  EXPECT_NE(st.message().find("a TCP connection is open"), std::string::npos);
  EXPECT_NE(st.message().find("booted afresh"), std::string::npos);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_FALSE(runtime_.Get(r.id)->request.restore);
  EXPECT_TRUE(runtime_.ListNamedCheckpoints(r.id).empty());
  EXPECT_EQ(OperationOf(op).phase, "Failed");
}

TEST_F(SandboxCheckpointsTest, RestoringRollsBackToTheKeptCheckpoint) {
  auto r = Running();
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
  int launches = runtime_.CountCalls(Op::kLaunch, r.id);
  std::string op;
  auto restored = lifecycle_->RestoreNamedCheckpoint(org_, r.id, "one", &op);
  ASSERT_TRUE(restored.ok()) << restored.status().message();
  EXPECT_EQ(restored->status, "running");
  EXPECT_EQ(runtime_.Get(r.id)->reinstated, "one");
  EXPECT_EQ(runtime_.CountCalls(Op::kLaunch, r.id), launches + 1);
  EXPECT_TRUE(runtime_.Get(r.id)->request.restore);
  EXPECT_EQ(runtime_.ListNamedCheckpoints(r.id).size(), 1u);  // still kept for another time
  auto record = OperationOf(op);
  EXPECT_EQ(record.kind, kRestoreOperation);
  EXPECT_EQ(record.phase, "Completed");
}

TEST_F(SandboxCheckpointsTest, AFailedRestoreBootsAfreshAndTheOperationSaysSo) {
  auto r = Running();
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
  runtime_.FailNext(Op::kLaunch, Internal("restore refused"));
  std::string op;
  auto restored = lifecycle_->RestoreNamedCheckpoint(org_, r.id, "one", &op);
  ASSERT_TRUE(restored.ok()) << restored.status().message();
  EXPECT_EQ(restored->status, "running");
  EXPECT_FALSE(runtime_.Get(r.id)->request.restore);
  auto record = OperationOf(op);
  EXPECT_EQ(record.phase, "Failed");
  EXPECT_NE(record.error.find("restore refused"), std::string::npos);
}

TEST_F(SandboxCheckpointsTest, AnotherOrganizationsSandboxIsNotFoundAndUntouched) {
  auto r = Running();
  int calls = static_cast<int>(runtime_.calls().size());
  std::string op;
  EXPECT_EQ(lifecycle_->TakeNamedCheckpoint("org_other", r.id, "one", &op).code(), Code::kNotFound);
  EXPECT_EQ(lifecycle_->RestoreNamedCheckpoint("org_other", r.id, "one", &op).status().code(),
            Code::kNotFound);
  EXPECT_EQ(static_cast<int>(runtime_.calls().size()), calls);
  EXPECT_TRUE(op.empty());
}

TEST_F(SandboxCheckpointsTest, OnlyARunningDurableSandboxHasCheckpoints) {
  auto instant = Running(/*durable=*/false);
  EXPECT_EQ(lifecycle_->TakeNamedCheckpoint(org_, instant.id, "one", nullptr).code(),
            Code::kConflict);
  auto durable = Running();
  ASSERT_TRUE(lifecycle_->Stop(org_, durable.id).ok());
  EXPECT_EQ(lifecycle_->TakeNamedCheckpoint(org_, durable.id, "one", nullptr).code(),
            Code::kConflict);
  EXPECT_EQ(runtime_.CountCalls(Op::kKeepCheckpoint), 0);
}

TEST_F(SandboxCheckpointsTest, ACheckpointAnotherRuntimeTookIsRefusedAndTheSandboxRunsOn) {
  auto r = Running();
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
  runtime_.MarkIncompatible(r.id, "one", "checkpoint 'one' was taken by runsc 0.0~20230101.0");
  int destroys = runtime_.CountCalls(Op::kDestroy, r.id);
  auto refused = lifecycle_->RestoreNamedCheckpoint(org_, r.id, "one", nullptr);
  EXPECT_EQ(refused.status().code(), Code::kUnsupported);
  EXPECT_NE(refused.status().message().find("20230101"), std::string::npos);
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy, r.id), destroys);  // untouched
  EXPECT_TRUE(runtime_.Running(r.id));
  EXPECT_EQ(runtime_.CountCalls(Op::kReinstateCheckpoint, r.id), 0);
}

TEST_F(SandboxCheckpointsTest, RestoringAnUnknownNameIsNotFoundAndTheSandboxRunsOn) {
  auto r = Running();
  auto restored = lifecycle_->RestoreNamedCheckpoint(org_, r.id, "never-taken", nullptr);
  EXPECT_EQ(restored.status().code(), Code::kNotFound);
  EXPECT_TRUE(runtime_.Running(r.id));
}

TEST_F(SandboxCheckpointsTest, ACrashAfterRunscCheckpointedResumesTheSandboxFromTheImage) {
  auto r = Running();
  // What a kill of adaptd between runsc checkpoint and the relaunch leaves: an open
  // checkpoint operation and a sandbox recorded running whose compute is gone, its image kept.
  auto op = BeginSandboxOperation(store_, org_, r.id, kCheckpointOperation, "Running");
  ASSERT_TRUE(op.ok());
  ASSERT_TRUE(runtime_.Checkpoint(r.id).ok());
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  EXPECT_TRUE(runtime_.Get(r.id)->request.restore);
  EXPECT_FALSE(runtime_.HasCheckpoint(r.id));
  auto record = OperationOf(*op);
  EXPECT_EQ(record.phase, "Failed");
  EXPECT_NE(record.error.find("interrupted"), std::string::npos);
}

TEST_F(SandboxCheckpointsTest, ACrashWithTheComputeGoneAndNoImageKeepsTheSandboxStopped) {
  auto r = Running();
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
  // A roll back killed after it stopped the sandbox, before the checkpoint was put back.
  auto op = BeginSandboxOperation(store_, org_, r.id, kRestoreOperation, "Running");
  ASSERT_TRUE(op.ok());
  ASSERT_TRUE(runtime_.Destroy(r.id, true).ok());
  lifecycle_->Reconcile();
  auto stopped = Stored(r.id);
  EXPECT_EQ(stopped.status, "hibernated");
  auto hibernation = HibernationOf(stopped);
  ASSERT_TRUE(hibernation);
  EXPECT_EQ(hibernation->workspace, "kept");
  EXPECT_EQ(hibernation->processes, "lost");
  EXPECT_NE(hibernation->note.value_or("").find("restore the checkpoint again"), std::string::npos);
  EXPECT_EQ(runtime_.ListNamedCheckpoints(r.id).size(), 1u);
  auto record = OperationOf(*op);
  EXPECT_EQ(record.phase, "Failed");
  EXPECT_NE(record.error.find("interrupted"), std::string::npos);
  // Started again, it boots afresh from its disk, and can be rolled back then.
  ASSERT_TRUE(lifecycle_->BeginStart(org_, r.id, {}, nullptr).ok());
  lifecycle_->Provision(r.id);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(lifecycle_->RestoreNamedCheckpoint(org_, r.id, "one", nullptr).ok());
}

TEST_F(SandboxCheckpointsTest, ACrashOnceTheRollBackStoppedTheSandboxIsFinishedAtTheRestart) {
  auto r = Running();
  ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
  // The roll back's operation names its checkpoint; adaptd died after the processes stopped.
  auto op = BeginSandboxOperation(store_, org_, r.id, kRestoreOperation, "Running", 0, "one");
  ASSERT_TRUE(op.ok());
  ASSERT_TRUE(runtime_.Destroy(r.id, true).ok());
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  EXPECT_TRUE(runtime_.Get(r.id)->request.restore) << "resumed from checkpoint 'one'";
  EXPECT_EQ(runtime_.ListNamedCheckpoints(r.id).size(), 1u) << "the checkpoint stays kept";
  auto record = OperationOf(*op);
  EXPECT_EQ(record.phase, "Completed") << record.error;
  EXPECT_EQ(record.checkpoint, "one");
}

TEST_F(SandboxCheckpointsTest, AnInterruptedRollBackWhoseCheckpointIsGoneKeepsTheSandboxStopped) {
  auto r = Running();
  auto op = BeginSandboxOperation(store_, org_, r.id, kRestoreOperation, "Running", 0, "gone");
  ASSERT_TRUE(op.ok());
  ASSERT_TRUE(runtime_.Destroy(r.id, true).ok());
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "hibernated");
  EXPECT_FALSE(runtime_.Running(r.id));
  EXPECT_EQ(OperationOf(*op).phase, "Failed");
}

TEST_F(SandboxCheckpointsTest, ACrashBeforeTheRollBackStoppedTheSandboxLeavesItRunning) {
  auto r = Running();
  // The roll back's operation written (Pending), the sandbox not touched yet.
  auto op = BeginSandboxOperation(store_, org_, r.id, kRestoreOperation, "Pending");
  ASSERT_TRUE(op.ok());
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
  auto record = OperationOf(*op);
  EXPECT_EQ(record.phase, "Failed");
  EXPECT_NE(record.error.find("before it began"), std::string::npos);
}

TEST_F(SandboxCheckpointsTest, ASandboxThatEndedWithNoCheckpointUnderWayStillFails) {
  auto r = Running();
  ASSERT_TRUE(runtime_.Destroy(r.id, true).ok());
  lifecycle_->Reconcile();
  EXPECT_EQ(StatusOf(r.id), "failed");
}

}  // namespace
}  // namespace adapt::core
