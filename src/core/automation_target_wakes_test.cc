// AutomationTargetWakes: a sandbox an automation run woke is stopped once the last run in it
// ends, and a stop refused for want of a place of checkpoint work waits without a thread and
// is tried again, never two at once. Over a scripted stop and a pool of one thread.
#include "core/automation_target_wakes.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace adapt::core {
namespace {

class AutomationTargetWakesTest : public testing::Test {
 protected:
  void TearDown() override {
    wakes_->Shutdown();
    pool_.join();
  }

  // Wakes whose refused stops are tried again after `retry_after`.
  void Retrying(std::chrono::milliseconds retry_after) {
    wakes_ = std::make_unique<AutomationTargetWakes>(
        pool_, [this](const std::string& o, const std::string& s) { return Stop(o, s); },
        retry_after);
  }
  void SetPlaces(int n) {
    std::lock_guard lock(mu_);
    places_ = n;
  }
  // Every stop asked for so far, refused ones included.
  std::vector<std::string> Stops() {
    std::lock_guard lock(mu_);
    return stops_;
  }
  void WaitUntil(const std::function<bool()>& done) {
    std::unique_lock lock(mu_);
    changed_.wait(lock, done);
  }
  // The pool ran everything queued so far.
  void Drain() {
    std::promise<void> done;
    boost::asio::post(pool_, [&done] { done.set_value(); });
    done.get_future().wait();
  }

  Status Stop(const std::string& org_id, const std::string& sandbox_id) {
    std::lock_guard lock(mu_);
    stops_.push_back(org_id + "/" + sandbox_id);
    changed_.notify_all();
    if (places_ == 0) return Status(Code::kResourceExhausted, "no place");
    ++stopped_;
    return Status::Ok();
  }

  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> stops_;  // guarded by mu_
  int stopped_ = 0;                 // guarded by mu_; stops that were not refused
  int places_ = 1;                  // guarded by mu_; 0: every stop is refused
  boost::asio::thread_pool pool_{1};
  std::unique_ptr<AutomationTargetWakes> wakes_ = std::make_unique<AutomationTargetWakes>(
      pool_, [this](const std::string& o, const std::string& s) { return Stop(o, s); });
};

TEST_F(AutomationTargetWakesTest, TheWokenSandboxIsStoppedWhenTheLastRunInItEnds) {
  wakes_->Enter("sbx_a");
  wakes_->Woke("sbx_a");   // the first run started it
  wakes_->Enter("sbx_a");  // a second run found it provisioning, or running
  EXPECT_EQ(wakes_->Executing("sbx_a"), 2);
  wakes_->Leave("org_1", "sbx_a");  // the run that woke it ends first
  EXPECT_TRUE(Stops().empty()) << "stopped under the other run";
  wakes_->Leave("org_1", "sbx_a");
  EXPECT_EQ(Stops(), (std::vector<std::string>{"org_1/sbx_a"}));
  EXPECT_EQ(wakes_->Executing("sbx_a"), 0);
}

TEST_F(AutomationTargetWakesTest, ASandboxNoRunWokeIsLeftRunning) {
  wakes_->Enter("sbx_a");
  wakes_->Enter("sbx_b");
  wakes_->Woke("sbx_b");
  wakes_->Leave("org_1", "sbx_a");
  EXPECT_TRUE(Stops().empty());
  wakes_->Leave("org_1", "sbx_b");
  EXPECT_EQ(Stops(), (std::vector<std::string>{"org_1/sbx_b"}));
  // Woken again by a later run: stopped again after it.
  wakes_->Enter("sbx_b");
  wakes_->Woke("sbx_b");
  wakes_->Leave("org_1", "sbx_b");
  EXPECT_EQ(Stops().size(), 2u);
}

TEST_F(AutomationTargetWakesTest, AStopWithoutAPlaceIsTriedAgainLaterWithoutHoldingAThread) {
  Retrying(std::chrono::milliseconds(1));
  SetPlaces(0);
  wakes_->Enter("sbx_a");
  wakes_->Woke("sbx_a");
  wakes_->Leave("org_1", "sbx_a");  // refused: returns, the retry waits on a timer
  ASSERT_GE(Stops().size(), 1u);
  // The one worker is free meanwhile: other work runs on it.
  Drain();
  WaitUntil([&] { return stops_.size() >= 3; });  // refused again, one try after another
  SetPlaces(1);
  WaitUntil([&] { return stopped_ == 1; });
  for (const auto& s : Stops()) EXPECT_EQ(s, "org_1/sbx_a");
}

TEST_F(AutomationTargetWakesTest, ARunThatEntersWhileTheStopWaitsIsNotCutShort) {
  Retrying(std::chrono::hours(1));
  SetPlaces(0);
  wakes_->Enter("sbx_a");
  wakes_->Woke("sbx_a");
  wakes_->Leave("org_1", "sbx_a");
  ASSERT_EQ(Stops().size(), 1u);
  // A new run comes while the stop waits for its retry, and ends once a place is free: the
  // sandbox is stopped then, once.
  wakes_->Enter("sbx_a");
  SetPlaces(1);
  EXPECT_EQ(Stops().size(), 1u);
  wakes_->Leave("org_1", "sbx_a");
  EXPECT_EQ(Stops().size(), 2u);
  std::lock_guard lock(mu_);
  EXPECT_EQ(stopped_, 1);
}

}  // namespace
}  // namespace adapt::core
