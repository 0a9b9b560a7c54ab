// SandboxService::Fork over a MemoryStore and a FakeRuntime: a fork is a new sandbox that
// restores a copy of a named checkpoint with the source's settings (its own id and network);
// other organizations' sandboxes, unknown or incompatible checkpoints are refused before
// anything is made, and a copy that fails fails the fork and its operation, never stuck.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/checkpoint_service.h"
#include "core/operation.h"
#include "core/sandbox_service.h"
#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

class SandboxForkTest : public testing_support::SandboxServiceFixture {
 protected:
  // A running durable sandbox with checkpoint "one" kept.
  store::SandboxRecord Source() {
    store::SandboxRecord r = NewSandbox("provisioning", false, true);
    r.env = {{"TOKEN", "kept"}};
    r.config.labels = {{"team", "data"}};
    Insert(r);
    lifecycle_->Provision(r.id);
    EXPECT_EQ(StatusOf(r.id), "running");
    EXPECT_TRUE(lifecycle_->TakeNamedCheckpoint(org_, r.id, "one", nullptr).ok());
    return r;
  }

  // Waits (bounded: a hang guard, not a timing assert) until `id` leaves provisioning, then
  // until its Provision has finished on the worker (it discards the copy after `running`).
  std::string Settled(const std::string& id) {
    for (int i = 0; i < 1000 && StatusOf(id) == "provisioning"; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Drain();
    return StatusOf(id);
  }

  size_t SandboxCount() {
    auto page = store_.ListSandboxes(org_, "", 200, std::nullopt);
    return page.ok() ? page->items.size() : 0;
  }

  ForkSandbox From(const std::string& from) {
    ForkSandbox f;
    f.from_checkpoint = from;
    return f;
  }
};

TEST_F(SandboxForkTest, AForkRestoresACopyOfTheCheckpointWithTheSourcesSettings) {
  auto source = Source();
  auto forked = service_->Fork(Caller(), From(source.id + "/one"), std::nullopt);
  ASSERT_TRUE(forked.ok()) << forked.status().message();
  const std::string id = forked->sandbox.id;
  EXPECT_NE(id, source.id);
  EXPECT_FALSE(forked->operation_id.empty());
  EXPECT_EQ(Settled(id), "running");
  auto fork = runtime_.Get(id);
  ASSERT_TRUE(fork.has_value());
  EXPECT_EQ(fork->seeded_from, source.id + "/one");
  EXPECT_TRUE(fork->request.restore);        // resumed from the copy, not booted
  EXPECT_EQ(fork->request.spec.id, id);      // its own id (and so its own network)
  EXPECT_FALSE(runtime_.HasCheckpoint(id));  // the copy has served
  store::SandboxRecord made = Stored(id);
  EXPECT_EQ(made.config.startup_class, "durable");
  EXPECT_EQ(made.config.labels, source.config.labels);
  EXPECT_EQ(made.env.at("TOKEN"), "kept");
  ASSERT_TRUE(made.config.forked_from.has_value());
  EXPECT_EQ(made.config.forked_from->sandbox_id, source.id);
  EXPECT_FALSE(made.result.hibernation.has_value());
  auto op = store_.GetOperation(org_, forked->operation_id);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->kind, kForkOperation);
  EXPECT_EQ(op->sandbox_id, id);
  EXPECT_EQ(op->phase, "Completed");
  // The source runs on, its checkpoint still kept.
  EXPECT_EQ(StatusOf(source.id), "running");
  EXPECT_EQ(runtime_.ListNamedCheckpoints(source.id).size(), 1u);
}

TEST_F(SandboxForkTest, ALaterStartOfTheForkRestoresItsOwnCheckpointNotTheSource) {
  auto source = Source();
  auto forked = service_->Fork(Caller(), From(source.id + "/one"), std::nullopt);
  ASSERT_TRUE(forked.ok()) << forked.status().message();
  ASSERT_EQ(Settled(forked->sandbox.id), "running");
  const std::string id = forked->sandbox.id;
  ASSERT_TRUE(lifecycle_->Stop(org_, id).ok());
  // The source's checkpoint may go: the fork no longer needs it.
  ASSERT_TRUE(runtime_.DeleteNamedCheckpoint(source.id, "one").ok());
  ASSERT_TRUE(lifecycle_->BeginStart(org_, id).ok());
  lifecycle_->Provision(id);
  EXPECT_EQ(StatusOf(id), "running");
  EXPECT_EQ(runtime_.CountCalls(Op::kSeedCheckpoint, id), 2);  // the second found its disk
  EXPECT_TRUE(runtime_.Get(id)->request.restore);
}

TEST_F(SandboxForkTest, OtherOrganizationsUnknownAndMalformedSourcesAreRefusedAndNothingIsMade) {
  auto source = Source();
  size_t before = SandboxCount();
  Principal other{"org_someone_else", "key_2", false};
  auto theirs = service_->Fork(other, From(source.id + "/one"), std::nullopt);
  EXPECT_EQ(theirs.status().code(), Code::kNotFound);
  EXPECT_EQ(theirs.status().field(), "from_checkpoint");
  EXPECT_EQ(service_->Fork(Caller(), From(source.id + "/two"), std::nullopt).status().code(),
            Code::kNotFound);
  EXPECT_EQ(
      service_->Fork(Caller(), From("sbx_0000000000000000/one"), std::nullopt).status().code(),
      Code::kNotFound);
  for (const char* bad : {"", "one", "/one", "sbx_x/", "sbx_x/Not_A_Label", "sbx_x/a/b"}) {
    auto refused = service_->Fork(Caller(), From(bad), std::nullopt);
    EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(refused.status().field(), "from_checkpoint") << bad;
  }
  ForkSandbox short_lived = From(source.id + "/one");
  short_lived.ttl_seconds = 0;
  EXPECT_EQ(service_->Fork(Caller(), short_lived, std::nullopt).status().field(), "ttl_seconds");
  EXPECT_EQ(SandboxCount(), before);
  EXPECT_EQ(runtime_.CountCalls(Op::kSeedCheckpoint), 0);
}

TEST_F(SandboxForkTest, ACheckpointAnotherRuntimeTookIsRefusedBeforeAnythingIsTouched) {
  auto source = Source();
  runtime_.MarkIncompatible(source.id, "one", "checkpoint 'one' was taken by runsc 0.0~20230101.0");
  size_t before = SandboxCount();
  auto refused = service_->Fork(Caller(), From(source.id + "/one"), std::nullopt);
  EXPECT_EQ(refused.status().code(), Code::kUnsupported);
  EXPECT_NE(refused.status().message().find("20230101"), std::string::npos);
  EXPECT_EQ(SandboxCount(), before);
  EXPECT_EQ(runtime_.CountCalls(Op::kSeedCheckpoint), 0);
}

TEST_F(SandboxForkTest, ACopyThatFailsFailsTheForkAndItsOperation) {
  auto source = Source();
  runtime_.FailNext(Op::kSeedCheckpoint, Status(Code::kInternal, "no space left on device"));
  auto forked = service_->Fork(Caller(), From(source.id + "/one"), std::nullopt);
  ASSERT_TRUE(forked.ok()) << forked.status().message();
  EXPECT_EQ(Settled(forked->sandbox.id), "failed");
  EXPECT_NE(Stored(forked->sandbox.id).error.find("no space left"), std::string::npos);
  auto op = store_.GetOperation(org_, forked->operation_id);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->phase, "Failed");
  EXPECT_NE(op->error.find("checkpoint 'one'"), std::string::npos);
  EXPECT_EQ(StatusOf(source.id), "running");
}

TEST_F(SandboxForkTest, ACheckpointTakenWithKeepOutlivesItsSandboxOthersGoWithIt) {
  CheckpointService checkpoints(store_, runtime_, *lifecycle_, *service_);
  store::SandboxRecord r = NewSandbox("provisioning", false, true);
  Insert(r);
  lifecycle_->Provision(r.id);
  ASSERT_TRUE(checkpoints.Take(Caller(), r.id, "kept", true).ok());
  ASSERT_TRUE(checkpoints.Take(Caller(), r.id, "dropped", false).ok());
  uint64_t both = checkpoints.OrgCheckpointBytes(org_);
  ASSERT_TRUE(service_->Delete(Caller(), r.id).ok());
  ASSERT_EQ(StatusOf(r.id), "deleted");

  auto listed = checkpoints.List(Caller(), r.id);
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].name, "kept");
  EXPECT_TRUE(listed->items[0].keep);
  EXPECT_EQ(checkpoints.OrgCheckpointBytes(org_), both / 2);  // still counted
  Principal other{"org_someone_else", "key_2", false};
  EXPECT_EQ(checkpoints.List(other, r.id).status().code(), Code::kNotFound);
  EXPECT_EQ(checkpoints.Delete(other, r.id, "kept").code(), Code::kNotFound);

  // A fork of it still works after the deletion.
  auto forked = service_->Fork(Caller(), From(r.id + "/kept"), std::nullopt);
  ASSERT_TRUE(forked.ok()) << forked.status().message();
  EXPECT_EQ(Settled(forked->sandbox.id), "running");

  ASSERT_TRUE(checkpoints.Delete(Caller(), r.id, "kept").ok());
  EXPECT_EQ(checkpoints.List(Caller(), r.id).status().code(), Code::kNotFound);
  EXPECT_EQ(checkpoints.OrgCheckpointBytes(org_), 0u);
}

TEST_F(SandboxForkTest, AHostWithoutRoomForTheCopyRefusesTheForkBeforeAnythingIsMade) {
  auto source = Source();
  size_t before = SandboxCount();
  runtime_.FailNext(Op::kReserveRoom, Status(Code::kUnavailable, "needs 3.0 GiB free"));
  auto refused = service_->Fork(Caller(), From(source.id + "/one"), std::nullopt);
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_EQ(SandboxCount(), before);
  EXPECT_EQ(runtime_.CountCalls(Op::kSeedCheckpoint), 0);
  // With the room, the copy reserves it again while it is made.
  const int reserved = runtime_.CountCalls(Op::kReserveRoom);
  auto forked = service_->Fork(Caller(), From(source.id + "/one"), std::nullopt);
  ASSERT_TRUE(forked.ok()) << forked.status().message();
  EXPECT_EQ(Settled(forked->sandbox.id), "running");
  EXPECT_EQ(runtime_.CountCalls(Op::kReserveRoom), reserved + 2);
}

}  // namespace
}  // namespace adapt::core
