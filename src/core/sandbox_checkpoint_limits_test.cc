// What keeps one sandbox's or one organization's checkpoints from holding the workers every
// organization shares, or the host's disk: a stop, checkpoint or roll back that finds its
// sandbox busy with another is refused at once (adaptd's own stops wait instead), an
// organization has only so many running at once (adaptd's own stops included), the per-sandbox
// count is checked again under the sandbox's lock, a checkpoint's delete waits for no long verb
// of its sandbox, and a host without the room for the copies
// refuses before anything is touched. Over CoreTest's MemoryStore and a FakeRuntime that holds a
// checkpoint midway.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/checkpoint_service.h"
#include "core/operation.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

class SandboxCheckpointLimitsTest : public testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    checkpoints_ = std::make_unique<CheckpointService>(store_, runtime_, *lifecycle_, *service_);
  }
  void TearDown() override {
    if (holder_.joinable()) {
      runtime_.ReleaseHeld(Op::kCheckpoint);
      holder_.join();
    }
    SandboxServiceFixture::TearDown();
  }

  std::string Running() {
    auto r = Insert(NewSandbox("provisioning", false, true));
    lifecycle_->Provision(r.id);
    EXPECT_EQ(StatusOf(r.id), "running");
    return r.id;
  }

  // Starts a take of checkpoint `name` of `id` on a thread of its own and returns once it
  // stands in runsc's checkpoint, its sandbox's lock (and its place) held.
  void HoldATake(const std::string& id, const std::string& name) {
    runtime_.HoldNext(Op::kCheckpoint);
    holder_ = std::thread([this, id, name] { held_ = checkpoints_->Take(Caller(), id, name); });
    runtime_.WaitUntilHeld(Op::kCheckpoint);
  }
  Result<CheckpointTaken> FinishHeldTake() {
    runtime_.ReleaseHeld(Op::kCheckpoint);
    holder_.join();
    return held_;
  }

  std::unique_ptr<CheckpointService> checkpoints_;
  std::thread holder_;
  Result<CheckpointTaken> held_ = Internal("not taken");
};

TEST_F(SandboxCheckpointLimitsTest, ABusySandboxRefusesAClientsLongVerbsAtOnceNamingTheOperation) {
  std::string sid = Running();
  HoldATake(sid, "first");
  auto open = store_.ListOpenOperations(sid);
  ASSERT_TRUE(open.ok() && open->size() == 1u);
  const std::string running = open->front().id;

  auto second = checkpoints_->Take(Caller(), sid, "second");
  ASSERT_EQ(second.status().code(), Code::kConflict) << second.status().message();
  EXPECT_NE(second.status().message().find("busy with its checkpoint operation " + running),
            std::string::npos)
      << second.status().message();
  EXPECT_EQ(checkpoints_->Restore(Caller(), sid, "first").status().code(), Code::kConflict);
  EXPECT_EQ(service_->Stop(Caller(), sid).status().code(), Code::kConflict);
  // Another organization learns nothing of it: its sandbox is not found, busy or not.
  Principal stranger{"org_other", "key_9", false};
  EXPECT_EQ(service_->Stop(stranger, sid).status().code(), Code::kNotFound);
  EXPECT_EQ(checkpoints_->Take(stranger, sid, "theirs").status().code(), Code::kNotFound);
  EXPECT_EQ(lifecycle_->TakeNamedCheckpoint("org_other", sid, "theirs", nullptr).code(),
            Code::kNotFound);
  // Nothing of theirs reached the runtime or the store.
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, sid), 1);
  EXPECT_EQ(store_.ListOpenOperations(sid)->size(), 1u);

  auto first = FinishHeldTake();
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(StatusOf(sid), "running");
  ASSERT_EQ(runtime_.ListNamedCheckpoints(sid).size(), 1u);
  // Free again: the next take goes ahead.
  EXPECT_TRUE(checkpoints_->Take(Caller(), sid, "second").ok());
}

// A delete takes the sandbox's lock too: a roll back under way reads the checkpoint's files.
TEST_F(SandboxCheckpointLimitsTest, ADeleteWaitsForNoLongVerbOfItsSandboxAndDeletesNothingThen) {
  std::string sid = Running();
  ASSERT_TRUE(checkpoints_->Take(Caller(), sid, "kept").ok());
  HoldATake(sid, "second");
  Status deleted = checkpoints_->Delete(Caller(), sid, "kept");
  EXPECT_EQ(deleted.code(), Code::kConflict) << deleted.message();
  ASSERT_TRUE(FinishHeldTake().ok());
  EXPECT_EQ(runtime_.ListNamedCheckpoints(sid).size(), 2u);
  EXPECT_TRUE(checkpoints_->Delete(Caller(), sid, "kept").ok());
  EXPECT_EQ(runtime_.ListNamedCheckpoints(sid).size(), 1u);
}

TEST_F(SandboxCheckpointLimitsTest, AdaptdsOwnStopWaitsForTheCheckpointInsteadOfBeingRefused) {
  std::string sid = Running();
  HoldATake(sid, "first");
  Result<PowerChange> stopped = Internal("not stopped");
  std::thread stopper([&] { stopped = service_->Stop(Caller(), sid, WhenBusy::kWait); });
  // Past the time a client's request waits before it is refused.
  std::this_thread::sleep_for(kBusyWait + std::chrono::milliseconds(500));
  ASSERT_TRUE(FinishHeldTake().ok());
  stopper.join();
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(StatusOf(sid), "hibernated");
}

TEST_F(SandboxCheckpointLimitsTest, AnOrganizationHasAtMostItsPlacesOfCheckpointWorkAtOnce) {
  OrgCounter work(1);
  checkpoints_->set_checkpoint_work(work);
  service_->set_checkpoint_work(work);
  std::string busy = Running(), other = Running();
  ASSERT_TRUE(checkpoints_->Take(Caller(), other, "kept").ok());
  HoldATake(busy, "first");

  auto take = checkpoints_->Take(Caller(), other, "second");
  ASSERT_EQ(take.status().code(), Code::kResourceExhausted) << take.status().message();
  EXPECT_NE(take.status().message().find("already has 1 stops, checkpoints or roll backs"),
            std::string::npos)
      << take.status().message();
  EXPECT_EQ(checkpoints_->Restore(Caller(), other, "kept").status().code(),
            Code::kResourceExhausted);
  EXPECT_EQ(service_->Stop(Caller(), other).status().code(), Code::kResourceExhausted);
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, other), 1);  // the take before the hold only
  EXPECT_EQ(StatusOf(other), "running");

  // Another organization's places are its own.
  auto theirs = store_.CreateOrg({NewId("org"), "other", false, NowMillis()});
  ASSERT_TRUE(theirs.ok());
  store::SandboxRecord r = NewSandbox("provisioning", false, true);
  r.org_id = theirs->id;
  Insert(r);
  lifecycle_->Provision(r.id);
  EXPECT_TRUE(checkpoints_->Take(Principal{theirs->id, "key_2", false}, r.id, "theirs").ok());
  // adaptd's own stop (an automation's, a controller's) takes a place too, and is refused at
  // once rather than holding a worker until one is free: its caller tries again later.
  auto own = service_->Stop(Caller(), other, WhenBusy::kWait);
  EXPECT_EQ(own.status().code(), Code::kResourceExhausted) << own.status().message();
  EXPECT_EQ(StatusOf(other), "running");

  ASSERT_TRUE(FinishHeldTake().ok());
  EXPECT_EQ(work.Held(org_), 0u);
  EXPECT_TRUE(service_->Stop(Caller(), other, WhenBusy::kWait).ok());
  EXPECT_EQ(StatusOf(other), "hibernated");
  EXPECT_TRUE(checkpoints_->Take(Caller(), busy, "second").ok());
}

// Hibernating idle sandboxes is checkpoint work too: one organization's fifty sandboxes idle
// at the same moment once hibernated on every worker at once.
TEST_F(SandboxCheckpointLimitsTest, AnIdleHibernationWaitsForAPlaceOfCheckpointWork) {
  OrgCounter work(1);
  checkpoints_->set_checkpoint_work(work);
  service_->set_checkpoint_work(work);
  std::string busy = Running(), idle = Running();
  HoldATake(busy, "first");
  // Every place is held: not now (the idle tracker asks again later), and nothing happened.
  EXPECT_FALSE(service_->IdleHibernation(idle, 60'000).has_value());
  EXPECT_EQ(StatusOf(idle), "running");
  ASSERT_TRUE(FinishHeldTake().ok());
  auto hibernation = service_->IdleHibernation(idle, 60'000);
  ASSERT_TRUE(hibernation.has_value());
  EXPECT_EQ(work.Held(org_), 1u) << "the place is held until the hibernation has run";
  (*hibernation)();
  hibernation.reset();
  EXPECT_EQ(work.Held(org_), 0u);
  EXPECT_EQ(StatusOf(idle), "hibernated");
  // A sandbox that no longer runs needs no place: its hibernation does nothing.
  auto none = service_->IdleHibernation(idle, 60'000);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(work.Held(org_), 0u);
}

TEST_F(SandboxCheckpointLimitsTest, TheCountAndTheNameAreCheckedAgainUnderTheSandboxsLock) {
  std::string sid = Running();
  for (size_t i = 0; i < kMaxCheckpointsPerSandbox; ++i)
    ASSERT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, sid, "c" + std::to_string(i), nullptr).ok());
  const int taken = runtime_.CountCalls(Op::kCheckpoint, sid);
  // What a request that looked before the others were kept would go on to.
  std::string op;
  Status over = lifecycle_->TakeNamedCheckpoint(org_, sid, "one-more", &op);
  EXPECT_EQ(over.code(), Code::kResourceExhausted) << over.message();
  Status again = lifecycle_->TakeNamedCheckpoint(org_, sid, "c0", &op);
  EXPECT_EQ(again.code(), Code::kConflict) << again.message();
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, sid), taken);
  EXPECT_TRUE(op.empty()) << "no operation was recorded";
  EXPECT_EQ(runtime_.ListNamedCheckpoints(sid).size(), kMaxCheckpointsPerSandbox);
  EXPECT_TRUE(runtime_.Running(sid));
}

TEST_F(SandboxCheckpointLimitsTest, AHostWithoutRoomForTheCopiesRefusesBeforeTheSandboxIsTouched) {
  std::string sid = Running();
  ASSERT_TRUE(checkpoints_->Take(Caller(), sid, "kept").ok());
  const int destroys = runtime_.CountCalls(Op::kDestroy, sid);

  runtime_.FailNext(Op::kReserveRoom, Status(Code::kUnavailable, "needs 3.0 GiB free"));
  auto take = checkpoints_->Take(Caller(), sid, "second");
  EXPECT_EQ(take.status().code(), Code::kUnavailable);
  EXPECT_NE(take.status().message().find("needs 3.0 GiB free"), std::string::npos);
  runtime_.FailNext(Op::kReserveRoom, Status(Code::kUnavailable, "needs 2.0 GiB free"));
  auto restore = checkpoints_->Restore(Caller(), sid, "kept");
  EXPECT_EQ(restore.status().code(), Code::kUnavailable);

  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, sid), 1);
  EXPECT_EQ(runtime_.CountCalls(Op::kReinstateCheckpoint, sid), 0);
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy, sid), destroys);
  EXPECT_TRUE(store_.ListOpenOperations(sid)->empty());
  EXPECT_TRUE(runtime_.Running(sid));
  EXPECT_EQ(runtime_.ListNamedCheckpoints(sid).size(), 1u);
}

TEST_F(SandboxCheckpointLimitsTest, AStopWithoutRoomToSaveTheProcessesKeepsTheFilesOnly) {
  std::string sid = Running();
  runtime_.FailNext(Op::kReserveRoom, Status(Code::kUnavailable, "needs 9.0 GiB free"));
  ASSERT_TRUE(lifecycle_->Stop(org_, sid).ok());
  EXPECT_EQ(StatusOf(sid), "hibernated");
  // runsc was not asked to save into a disk that would fill midway.
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, sid), 0);
  Hibernation h = ReadHibernation(Stored(sid));
  EXPECT_FALSE(h.processes_saved);
  EXPECT_TRUE(h.workspace_kept);
  EXPECT_NE(h.note.find("disk space"), std::string::npos) << h.note;
  EXPECT_EQ(h.note.find("9.0 GiB"), std::string::npos) << "the host's figures stay in its log";
  // The next stop, with the room, saves them.
  ASSERT_TRUE(lifecycle_->BeginStart(org_, sid).ok());
  lifecycle_->Provision(sid);
  ASSERT_EQ(StatusOf(sid), "running");
  ASSERT_TRUE(lifecycle_->Stop(org_, sid).ok());
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, sid), 1);
  EXPECT_TRUE(ReadHibernation(Stored(sid)).processes_saved);
}

}  // namespace
}  // namespace adapt::core
