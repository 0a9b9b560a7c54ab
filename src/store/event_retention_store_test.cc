// EventStore::PruneEvents and PrunedEventSeq, on every backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::SqliteStoreTest;
using testing_support::StoreTest;

class EventRetentionTest : public StoreTest {
 protected:
  // Moves sandbox `r` to `status` at `at`, which writes its status event.
  void Move(SandboxRecord& r, const std::string& status, int64_t at) {
    std::string from = r.status;
    r.status = status;
    r.updated_at = at;
    ASSERT_TRUE(store_->UpdateSandbox(r, {from}).ok());
  }

  void AppEvent(int64_t at) {
    EventRecord e;
    e.org_id = org_.id;
    e.status = "replica.ready";
    e.at = at;
    e.app_id = "app_one";
    ASSERT_TRUE(store_->AppendAppEvent(e).ok());
  }

  std::vector<std::string> AppStatuses() {
    std::vector<std::string> out;
    auto events = store_->ListEvents(org_.id, "", 0, 1000);
    EXPECT_TRUE(events.ok()) << events.status().message();
    if (events.ok())
      for (const auto& e : *events)
        if (!e.app_id.empty()) out.push_back(e.status);
    return out;
  }
};

TEST_P(EventRetentionTest, OldEventsGoOldestFirstInBoundedStepsAndRecentOnesStay) {
  SandboxRecord idle = MustCreate(Sandbox(org_.id, "idle", 1000));
  Move(idle, "running", 2000);
  SandboxRecord gone = MustCreate(Sandbox(org_.id, "gone", 1100));
  Move(gone, "running", 1500);
  Move(gone, "deleted", 1800);
  AppEvent(1200);
  SandboxRecord fresh = MustCreate(Sandbox(other_org_.id, "fresh", 5000));
  Move(fresh, "running", 9000);
  AppEvent(4000);
  int64_t latest = *store_->LatestEventSeq();
  EXPECT_EQ(*store_->PrunedEventSeq(), 0);

  // Seven events are older than 3000; the idle sandbox's newest one is its state and stays.
  auto first = store_->PruneEvents(3000, 2);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, 2);  // no more than asked, the oldest: both sandboxes' creations
  EXPECT_EQ(EventStatuses(org_.id, idle.id), std::vector<std::string>{"running"});
  EXPECT_EQ(EventStatuses(org_.id, gone.id), (std::vector<std::string>{"running", "deleted"}));
  EXPECT_EQ(AppStatuses().size(), 2u);

  auto rest = store_->PruneEvents(3000, 100);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(*rest, 3);  // the app event at 1200, and the deleted sandbox's last two
  EXPECT_EQ(*store_->PruneEvents(3000, 100), 0);

  EXPECT_EQ(EventStatuses(org_.id, idle.id), std::vector<std::string>{"running"});
  EXPECT_TRUE(EventStatuses(org_.id, gone.id).empty());
  EXPECT_EQ(AppStatuses().size(), 1u);  // the one at 4000
  EXPECT_EQ(EventStatuses(other_org_.id, fresh.id),
            (std::vector<std::string>{"provisioning", "running"}));

  // The newest pruned one: the deleted sandbox's end.
  auto pruned = store_->PrunedEventSeq();
  ASSERT_TRUE(pruned.ok());
  auto idle_events = store_->ListEvents(org_.id, idle.id, 0, 10);
  EXPECT_GT(*pruned, idle_events->front().seq);
  EXPECT_LT(*pruned, latest);
  EXPECT_EQ(*store_->LatestEventSeq(), latest);
}

TEST_P(EventRetentionTest, TheLatestSequenceNumberOutlivesEveryEvent) {
  AppEvent(1000);
  AppEvent(1100);
  int64_t latest = *store_->LatestEventSeq();
  EXPECT_EQ(*store_->PruneEvents(5000, 100), 2);
  EXPECT_TRUE(store_->ListEvents(org_.id, "", 0, 100)->empty());
  // A stream that resumes from the last id it got is not told it was never sent.
  EXPECT_EQ(*store_->LatestEventSeq(), latest);
  EXPECT_EQ(*store_->PrunedEventSeq(), latest);
  AppEvent(6000);
  EXPECT_GT(*store_->LatestEventSeq(), latest);
}

INSTANTIATE_TEST_SUITE_P(Backends, EventRetentionTest,
                         testing::Values(testing_support::Backend::kSqlite,
                                         testing_support::Backend::kMemory),
                         testing_support::BackendName);

TEST_F(SqliteStoreTest, ThePrunedSequenceNumberIsKeptAcrossAReopen) {
  SandboxRecord r = MustCreate(Sandbox(org_.id, "a", 1000));
  r.status = "deleted";
  r.updated_at = 1500;
  ASSERT_TRUE(store_->UpdateSandbox(r, {"provisioning"}).ok());
  ASSERT_EQ(*store_->PruneEvents(2000, 100), 2);
  int64_t pruned = *store_->PrunedEventSeq();
  EXPECT_GT(pruned, 0);
  Reopen();
  EXPECT_EQ(*store_->PrunedEventSeq(), pruned);
  EXPECT_EQ(*store_->LatestEventSeq(), pruned);
}

}  // namespace
}  // namespace adapt::store
