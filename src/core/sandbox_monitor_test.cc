// SandboxMonitor over a MemoryStore and a FakeRuntime: it notices workloads that ended and
// deletes expired sandboxes, on its first tick (no waiting out a poll interval).
#include "core/sandbox_monitor.h"

#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <thread>

#include "core/core_test_fixture.h"
#include "core/sandbox_service.h"

namespace adapt::core {
namespace {

class SandboxMonitorTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
    service_ = std::make_unique<SandboxService>(store_, runtime_, *lifecycle_, *images_, workers_,
                                                testing_support::kTestImage);
    monitor_ = std::make_unique<SandboxMonitor>(store_, *lifecycle_, *service_, workers_);
  }
  void TearDown() override {
    monitor_->Stop();
    workers_.join();
    CoreTest::TearDown();
  }

  // Polls `done` until it holds: the monitor works on its own threads. The 30 s bound only
  // ends a hang (a loaded machine can take seconds), it is not a timing.
  bool Eventually(const std::function<bool()>& done) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  boost::asio::thread_pool workers_{2};
  std::unique_ptr<SandboxLifecycle> lifecycle_;
  std::unique_ptr<SandboxService> service_;
  std::unique_ptr<SandboxMonitor> monitor_;
};

TEST_F(SandboxMonitorTest, ARunningSandboxWhoseWorkloadEndedIsRecordedEnded) {
  auto r = Insert(NewSandbox("provisioning", /*startup=*/true));
  lifecycle_->Provision(r.id);
  auto alive = Insert(NewSandbox("provisioning"));
  lifecycle_->Provision(alive.id);
  runtime_.Exit(r.id, 0);
  monitor_->Start();
  EXPECT_TRUE(Eventually([&] { return StatusOf(r.id) == "completed"; })) << StatusOf(r.id);
  EXPECT_EQ(StatusOf(alive.id), "running");
}

TEST_F(SandboxMonitorTest, WakeChecksTheSandboxAtOnce) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  runtime_.LoseMonitor(r.id);
  monitor_->Wake(r.id);
  EXPECT_TRUE(Eventually([&] { return StatusOf(r.id) == "failed"; })) << StatusOf(r.id);
}

TEST_F(SandboxMonitorTest, AnExpiredSandboxIsDeletedAndOneNotYetDueIsNot) {
  auto due = NewSandbox();
  due.expires_at = NowMillis() - 1;
  due = Insert(due);
  lifecycle_->Provision(due.id);
  auto later = NewSandbox();
  later.expires_at = NowMillis() + 3600 * 1000;
  later = Insert(later);
  lifecycle_->Provision(later.id);
  monitor_->Start();
  EXPECT_TRUE(Eventually([&] { return StatusOf(due.id) == "deleted"; })) << StatusOf(due.id);
  EXPECT_EQ(Stored(due.id).termination_reason, "expired");
  EXPECT_FALSE(runtime_.Has(due.id));
  EXPECT_EQ(StatusOf(later.id), "running");
}

}  // namespace
}  // namespace adapt::core
