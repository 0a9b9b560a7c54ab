// The store's warm pool members (SQLite and MemoryStore): a claim takes one ready member of its
// pool, once.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "os/temp_dir.h"
#include "store/memory_store.h"
#include "store/store.h"

namespace adapt::store {
namespace {

class PoolStoreTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override { Reopen(); }
  void TearDown() override { store_.reset(); }
  // GetParam(): MemoryStore, which has nothing to reopen and keeps its members.
  void Reopen() {
    if (GetParam()) {
      if (!store_) store_ = std::make_unique<MemoryStore>();
      return;
    }
    store_.reset();
    auto s = OpenSqliteStore(dir_ + "/adapt.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  os::TempDir tmp_{"pool-test"};
  const std::string dir_ = tmp_.path();
  std::unique_ptr<Store> store_;
};

TEST_P(PoolStoreTest, ClaimTakesOnlyReadyMembersOfItsPoolOldestFirst) {
  ASSERT_TRUE(store_->PutPoolMember({"sbx_b", "k1", "ready", 20}).ok());
  ASSERT_TRUE(store_->PutPoolMember({"sbx_a", "k1", "ready", 10}).ok());
  ASSERT_TRUE(store_->PutPoolMember({"sbx_c", "k1", "booting", 5}).ok());
  ASSERT_TRUE(store_->PutPoolMember({"sbx_d", "k2", "ready", 1}).ok());
  auto first = store_->ClaimPoolMember("k1");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->id, "sbx_a");
  auto second = store_->ClaimPoolMember("k1");
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->id, "sbx_b");
  auto none = store_->ClaimPoolMember("k1");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "the booting member is not claimable";
  auto left = store_->ListPoolMembers();
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].id, "sbx_d");
  EXPECT_EQ((*left)[1].id, "sbx_c");
}

TEST_P(PoolStoreTest, PutReplacesAndMembersSurviveReopen) {
  ASSERT_TRUE(store_->PutPoolMember({"sbx_a", "k1", "booting", 10}).ok());
  ASSERT_TRUE(store_->PutPoolMember({"sbx_a", "k1", "ready", 10}).ok());
  Reopen();
  auto left = store_->ListPoolMembers();
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].state, "ready");
  ASSERT_TRUE(store_->DeletePoolMember("sbx_a").ok());
  EXPECT_TRUE(store_->ListPoolMembers()->empty());
}

TEST_P(PoolStoreTest, ConcurrentClaimsNeverShareAMember) {
  constexpr int kMembers = 40;
  for (int i = 0; i < kMembers; ++i)
    ASSERT_TRUE(store_->PutPoolMember({"sbx_" + std::to_string(i), "k", "ready", i}).ok());
  std::mutex mu;
  std::multiset<std::string> got;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto m = store_->ClaimPoolMember("k");
        if (m.ok() && m->has_value()) {
          std::lock_guard lock(mu);
          got.insert((*m)->id);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(got.size(), static_cast<size_t>(kMembers));
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size());
}

INSTANTIATE_TEST_SUITE_P(Backends, PoolStoreTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Memory" : "Sqlite";
                         });

}  // namespace
}  // namespace adapt::store
