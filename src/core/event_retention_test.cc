// EventRetention over a MemoryStore: a pass takes what is past the retention, in bounded work.
#include "core/event_retention.h"

#include <gtest/gtest.h>

#include "store/memory_store.h"

namespace adapt::core {
namespace {

constexpr int64_t kDay = 86400 * 1000;

void AppEvents(store::MemoryStore& store, int n, int64_t at) {
  for (int i = 0; i < n; ++i) {
    store::EventRecord e;
    e.org_id = "org_a";
    e.app_id = "app_a";
    e.status = "replica.ready";
    e.at = at;
    ASSERT_TRUE(store.AppendAppEvent(e).ok());
  }
}

size_t Kept(store::MemoryStore& store) { return store.ListEvents("org_a", "", 0, 100000)->size(); }

TEST(EventRetention, APassTakesWhatIsPastTheRetentionAndLeavesTheRest) {
  store::MemoryStore store;
  AppEvents(store, 1200, 10 * kDay);  // past a 7-day retention at day 20
  AppEvents(store, 3, 15 * kDay);     // within it
  EventRetention retention(store, 7 * 86400);
  auto pruned = retention.PruneOnce(20 * kDay);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  EXPECT_EQ(*pruned, 1200);  // in batches of kBatchRows, within one pass
  EXPECT_EQ(Kept(store), 3u);
  EXPECT_EQ(*retention.PruneOnce(20 * kDay), 0);
}

TEST(EventRetention, ABacklogIsWorkedOffOverSeveralPasses) {
  store::MemoryStore store;
  int per_pass = EventRetention::kBatchRows * EventRetention::kBatchesPerPass;
  AppEvents(store, per_pass + 7, 1 * kDay);
  EventRetention retention(store, 86400);
  EXPECT_EQ(*retention.PruneOnce(5 * kDay), per_pass);
  EXPECT_EQ(Kept(store), 7u);
  EXPECT_EQ(*retention.PruneOnce(5 * kDay), 7);
  EXPECT_EQ(Kept(store), 0u);
}

TEST(EventRetention, AStoreThatFailsIsReported) {
  store::MemoryStore store;
  AppEvents(store, 2, 1 * kDay);
  store.FailWrites(Internal("the disk is full"));
  EventRetention retention(store, 86400);
  auto pruned = retention.PruneOnce(5 * kDay);
  ASSERT_FALSE(pruned.ok());
  EXPECT_EQ(pruned.status().message(), "the disk is full");
  EXPECT_EQ(Kept(store), 2u);
}

}  // namespace
}  // namespace adapt::core
