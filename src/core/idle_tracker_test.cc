// IdleTracker over a MemoryStore with a clock of the test's own: RunDue is called by hand, so
// nothing here waits or depends on timing.
#include "core/idle_tracker.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/core_test_fixture.h"

namespace adapt::core {
namespace {

class IdleTrackerTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    tracker_ = std::make_unique<IdleTracker>(
        store_,
        [this](const std::string& id, int64_t idle_ms) {
          idle_.push_back({id, idle_ms});
          if (during_report_) during_report_(id);
          return accept_;
        },
        [this] { return now_; });
  }

  // A running sandbox that asked to hibernate after `timeout_seconds` idle, seen by the
  // tracker at the current time.
  std::string Watched(int64_t timeout_seconds) {
    auto r = NewSandbox("running");
    r.config.idle_timeout_seconds = timeout_seconds;
    r.updated_at = now_;
    Insert(r);
    tracker_->Refresh(r.id);
    return r.id;
  }

  int64_t now_ = 1'000'000;
  bool accept_ = true;  // what the hibernations say: false, "not now"
  std::function<void(const std::string&)> during_report_;  // runs while a report is made
  std::vector<std::pair<std::string, int64_t>> idle_;
  std::unique_ptr<IdleTracker> tracker_;
};

TEST_F(IdleTrackerTest, ASandboxUnusedForItsTimeoutIsReportedIdleOnce) {
  std::string id = Watched(60);
  EXPECT_EQ(tracker_->RunDue(), now_ + 60'000);
  now_ += 59'999;
  tracker_->RunDue();
  EXPECT_TRUE(idle_.empty());
  now_ += 1;
  EXPECT_EQ(tracker_->RunDue(), std::nullopt);
  ASSERT_EQ(idle_.size(), 1u);
  EXPECT_EQ(idle_[0].first, id);
  EXPECT_EQ(idle_[0].second, 60'000);
  now_ += 120'000;
  tracker_->RunDue();
  EXPECT_EQ(idle_.size(), 1u);
}

TEST_F(IdleTrackerTest, ATouchMovesTheDeadline) {
  std::string id = Watched(60);
  now_ += 50'000;
  tracker_->Touch(id);
  EXPECT_EQ(tracker_->RunDue(), now_ + 60'000);
  now_ += 59'000;
  tracker_->RunDue();
  EXPECT_TRUE(idle_.empty());
  EXPECT_EQ(tracker_->LastActivity(id), now_ - 59'000);
}

TEST_F(IdleTrackerTest, WorkInProgressIsNeverIdleAndItsEndCountsAsUse) {
  std::string id = Watched(60);
  tracker_->Begin(id);
  now_ += 3600'000;
  EXPECT_EQ(tracker_->RunDue(), std::nullopt);
  EXPECT_TRUE(idle_.empty());
  tracker_->End(id);
  EXPECT_EQ(tracker_->RunDue(), now_ + 60'000);
  now_ += 60'000;
  tracker_->RunDue();
  ASSERT_EQ(idle_.size(), 1u);
  EXPECT_EQ(idle_[0].second, 60'000);
}

TEST_F(IdleTrackerTest, TwoOverlappingTransfersKeepItBusyUntilBothEnd) {
  std::string id = Watched(60);
  tracker_->Begin(id);
  tracker_->Begin(id);
  tracker_->End(id);
  now_ += 120'000;
  tracker_->RunDue();
  EXPECT_TRUE(idle_.empty());
  tracker_->End(id);
  EXPECT_EQ(tracker_->RunDue(), now_ + 60'000);
}

TEST_F(IdleTrackerTest, SandboxesWithoutATimeoutOrNotRunningAreNotWatched) {
  auto plain = Insert(NewSandbox("running"));
  tracker_->Refresh(plain.id);
  auto stopped = NewSandbox("hibernated");
  stopped.config.idle_timeout_seconds = 10;
  Insert(stopped);
  tracker_->Refresh(stopped.id);
  tracker_->Refresh("sbx_unknown");
  EXPECT_EQ(tracker_->RunDue(), std::nullopt);
  now_ += 3600'000;
  tracker_->RunDue();
  EXPECT_TRUE(idle_.empty());
}

TEST_F(IdleTrackerTest, ASandboxThatStopsIsForgotten) {
  std::string id = Watched(60);
  tracker_->RunDue();
  auto r = store_.GetSandbox("", id);
  ASSERT_TRUE(r.ok());
  r->status = "hibernated";
  ASSERT_TRUE(store_.UpdateSandbox(*r, {"running"}).ok());
  tracker_->Refresh(id);
  EXPECT_EQ(tracker_->RunDue(), std::nullopt);
  EXPECT_EQ(tracker_->LastActivity(id), std::nullopt);
}

// After a restart of adaptd the tracker first sees every running sandbox at once: each counts
// as used then, however long ago it last changed status, so none is hibernated at start-up.
TEST_F(IdleTrackerTest, ARestartCountsEverySandboxAsUsedWhenFirstSeen) {
  auto r = NewSandbox("running");
  r.config.idle_timeout_seconds = 60;
  r.updated_at = now_ - 3600'000;
  Insert(r);
  tracker_->Refresh(r.id);
  EXPECT_EQ(tracker_->RunDue(), now_ + 60'000);
  EXPECT_TRUE(idle_.empty());
}

// A hibernation that cannot begin now (its organization holds every place for checkpoint
// work) is asked for again kRetryMs later, with the idle time grown, until one is accepted;
// a sandbox used meanwhile waits its whole timeout again.
TEST_F(IdleTrackerTest, AHibernationRefusedForNowIsAskedForAgainLater) {
  std::string id = Watched(60);
  tracker_->RunDue();  // seen now
  now_ += 60'000;
  accept_ = false;
  EXPECT_EQ(tracker_->RunDue(), now_ + IdleTracker::kRetryMs);
  ASSERT_EQ(idle_.size(), 1u);
  now_ += IdleTracker::kRetryMs - 1;
  tracker_->RunDue();
  EXPECT_EQ(idle_.size(), 1u);
  now_ += 1;
  accept_ = true;
  EXPECT_EQ(tracker_->RunDue(), std::nullopt);
  ASSERT_EQ(idle_.size(), 2u);
  EXPECT_EQ(idle_[1].first, id);
  EXPECT_EQ(idle_[1].second, 60'000 + IdleTracker::kRetryMs);
  now_ += 600'000;
  tracker_->RunDue();
  EXPECT_EQ(idle_.size(), 2u) << "accepted once, it is not asked for again";

  std::string used = Watched(60);
  tracker_->RunDue();
  now_ += 60'000;
  accept_ = false;
  tracker_->RunDue();
  ASSERT_EQ(idle_.size(), 3u);
  tracker_->Touch(used);
  accept_ = true;
  now_ += IdleTracker::kRetryMs;
  EXPECT_EQ(tracker_->RunDue(), now_ - IdleTracker::kRetryMs + 60'000);
  EXPECT_EQ(idle_.size(), 3u) << "used since the refusal: its whole timeout counts again";
}

// A use while the tracker asks for a hibernation that is then refused counts: the sandbox
// waits its whole timeout again, not the retry's 10 s.
TEST_F(IdleTrackerTest, AUseWhileARefusedHibernationIsAskedForCounts) {
  std::string id = Watched(60);
  tracker_->RunDue();
  now_ += 60'000;
  accept_ = false;
  during_report_ = [this](const std::string& reported) {
    now_ += 5;
    tracker_->Touch(reported);
  };
  std::optional<int64_t> next = tracker_->RunDue();
  EXPECT_EQ(next, now_ + 60'000);
  EXPECT_EQ(tracker_->LastActivity(id), now_);
  during_report_ = nullptr;
  now_ += IdleTracker::kRetryMs;
  tracker_->RunDue();
  EXPECT_EQ(idle_.size(), 1u) << "used while it was asked for: not idle 10 s later";
}

}  // namespace
}  // namespace adapt::core
