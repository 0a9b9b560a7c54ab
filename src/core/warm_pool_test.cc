// WarmPool over a MemoryStore and a FakeRuntime: what start-up does with the members a previous
// run left, and that a member whose teardown fails is kept for a later try.
#include "core/warm_pool.h"

#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>

#include "core/core_test_fixture.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

class WarmPoolTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    PoolSpec spec{testing_support::kTestImage, 2, 1, 512, 1024};
    key_ = spec.Key();
    pool_ = std::make_unique<WarmPool>(store_, runtime_, *images_, nullptr, workers_,
                                       std::vector<PoolSpec>{spec});
  }
  void TearDown() override {
    workers_.join();
    CoreTest::TearDown();
  }

  // A member a previous adaptd recorded in `state` (its sandbox booted or half-booted).
  std::string LeftMember(const std::string& state) {
    std::string id = NewId("sbx");
    EXPECT_TRUE(store_.PutPoolMember({id, key_, state, NowMillis()}).ok());
    runtime_.AddRunning(id);
    return id;
  }

  std::vector<store::PoolMemberRecord> Members() {
    auto m = store_.ListPoolMembers();
    EXPECT_TRUE(m.ok());
    return m.ok() ? *m : std::vector<store::PoolMemberRecord>{};
  }

  boost::asio::thread_pool workers_{1};
  std::string key_;
  std::unique_ptr<WarmPool> pool_;
};

TEST_F(WarmPoolTest, StartUpTearsDownEveryMemberAPreviousRunLeftReadyOrNot) {
  std::string ready = LeftMember("ready");
  std::string booting = LeftMember("booting");
  ASSERT_EQ(pool_->ReadyCount(key_), 1u);
  pool_->RemoveLeftovers();
  EXPECT_FALSE(runtime_.Has(ready));
  EXPECT_FALSE(runtime_.Has(booting));
  EXPECT_TRUE(Members().empty());
  EXPECT_EQ(pool_->ReadyCount(key_), 0u);
  // Members are disposable: nothing of them is kept, not even the disk.
  for (const auto& c : runtime_.calls()) {
    if (c.op == Op::kDestroy) {
      EXPECT_FALSE(c.keep_disk);
    }
  }
}

TEST_F(WarmPoolTest, AMemberWhoseTeardownFailsIsKeptOutOfThePoolForALaterTry) {
  std::string id = LeftMember("ready");
  runtime_.FailNext(Op::kDestroy, Internal("umount: device busy"));
  pool_->RemoveLeftovers();
  auto members = Members();
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].id, id);
  EXPECT_EQ(members[0].state, "teardown");
  EXPECT_EQ(pool_->ReadyCount(key_), 0u);  // never claimed
  auto claimed = store_.ClaimPoolMember(key_);
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed->has_value());
  // The next start-up tries again, and succeeds.
  pool_->RemoveLeftovers();
  EXPECT_TRUE(Members().empty());
  EXPECT_FALSE(runtime_.Has(id));
}

TEST_F(WarmPoolTest, ShutdownTearsDownEveryMember) {
  std::string a = LeftMember("ready");
  std::string b = LeftMember("booting");
  pool_->Shutdown();
  EXPECT_TRUE(Members().empty());
  EXPECT_FALSE(runtime_.Has(a));
  EXPECT_FALSE(runtime_.Has(b));
}

TEST_F(WarmPoolTest, ADiscardedMemberIsRecordedUntilItIsTornDown) {
  std::string id = NewId("sbx");
  runtime_.AddRunning(id);
  pool_->Discard(id);
  // Recorded at once (a crash before the teardown still finds it) ...
  workers_.join();
  // ... and gone once the teardown ran on the workers.
  EXPECT_TRUE(Members().empty());
  EXPECT_FALSE(runtime_.Has(id));
  EXPECT_EQ(runtime_.CountCalls(Op::kDestroy, id), 1);
}

TEST_F(WarmPoolTest, ACreateIsNotGivenAMemberWhenThePoolHasNoNetwork) {
  LeftMember("ready");
  // No NetworkManager: members boot without a network, which no create's policy can be put
  // on; the member stays in the pool.
  WarmPool::Claim claim = pool_->Take(NewSandbox().config);
  EXPECT_FALSE(claim.id.has_value());
  EXPECT_FALSE(claim.reason.empty());
  EXPECT_EQ(pool_->ReadyCount(key_), 1u);
}

}  // namespace
}  // namespace adapt::core
