// The REST command's wait for a sandbox still booting (command_boot_wait.cc) over the core's
// Waiter, a MemoryStore and a FakeRuntime: it starts the command once, when the sandbox leaves
// provisioning or at the deadline, whichever comes first (the Waiter's timer and the HTTP
// server's Expire race for it), answers exactly once, and never after Cancel.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "api/command_wait.h"
#include "core/sandbox_service_fixture.h"

namespace adapt::api {
namespace {

using namespace std::chrono_literals;
using core::Change;

class BootThenCommandWaitTest : public core::testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    waiter_ = std::make_unique<core::Waiter>(events_, workers_);
    service_->set_waiter(waiter_.get());
    commands_ = std::make_unique<core::CommandService>(store_, runtime_, *images_);
    commands_->set_waiter(&events_, waiter_.get());
    sandbox_ = Insert(NewSandbox("provisioning"));
  }
  void TearDown() override {
    commands_.reset();
    waiter_->Shutdown();
    SandboxServiceFixture::TearDown();
  }

  // The deferred answer for `sandbox_`, whose start records its calls and answers `started`.
  std::shared_ptr<DeferredResponse> Wait(std::chrono::milliseconds within,
                                         Result<core::StartedCommand> started) {
    CommandStart start = [this, started] {
      ++starts_;
      return started;
    };
    return MakeBootThenCommandWait(*service_, *commands_, workers_, Caller(), sandbox_.id,
                                   std::move(start), std::chrono::steady_clock::now() + within,
                                   CommandWaitKind::kRun);
  }

  DeferredResponse::Reply Recorder() {
    return [this](HttpResponse r) {
      std::lock_guard lock(mu_);
      replies_.push_back(std::move(r));
      cv_.notify_all();
    };
  }

  // The replies once `n` came (or 5 s passed), after a moment for any extra one to show.
  std::vector<HttpResponse> Replies(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 5s, [&] { return replies_.size() >= n; });
    lock.unlock();
    std::this_thread::sleep_for(100ms);
    lock.lock();
    return replies_;
  }

  void Boot(const std::string& status) {
    auto r = Stored(sandbox_.id);
    r.status = status;
    ASSERT_TRUE(store_.UpdateSandbox(r, {"provisioning"}).ok());
    events_.Notify({Change::Kind::kSandboxStatus, sandbox_.id});
  }

  std::unique_ptr<core::Waiter> waiter_;
  std::unique_ptr<core::CommandService> commands_;
  store::SandboxRecord sandbox_;
  std::atomic<int> starts_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<HttpResponse> replies_;
};

TEST_F(BootThenCommandWaitTest, StartsOnceTheSandboxBootsAndAnswersWhatTheStartSaid) {
  auto wait = Wait(10s, Status(Code::kConflict, "sandbox is failed"));
  wait->Start(Recorder());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(starts_, 0);  // parked while it boots
  Boot("failed");
  auto replies = Replies(1);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].status, 409);
  EXPECT_NE(replies[0].body.find("sandbox is failed"), std::string::npos) << replies[0].body;
  EXPECT_EQ(starts_, 1);
}

// A start that throws (a bug) answers 500 at once: the wait has begun, so neither the deadline
// nor the server's Expire would answer it, and the request would stay open for good.
TEST_F(BootThenCommandWaitTest, AStartThatThrowsAnswers500AtOnce) {
  CommandStart start = [this]() -> Result<core::StartedCommand> {
    ++starts_;
    throw std::runtime_error("start blew up");
  };
  auto wait = MakeBootThenCommandWait(*service_, *commands_, workers_, Caller(), sandbox_.id,
                                      std::move(start), std::chrono::steady_clock::now() + 10s,
                                      CommandWaitKind::kRun);
  wait->Start(Recorder());
  Boot("running");
  auto replies = Replies(1);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].status, 500);
  // The exception's text stays in adaptd's log, as for a handler's.
  EXPECT_NE(replies[0].body.find("\"internal\""), std::string::npos) << replies[0].body;
  EXPECT_NE(replies[0].body.find("(reference err_"), std::string::npos) << replies[0].body;
  EXPECT_EQ(replies[0].body.find("blew up"), std::string::npos) << replies[0].body;
  wait->Expire();  // the deadline's call then finds it begun: no second answer, no second start
  EXPECT_EQ(Replies(1).size(), 1u);
  EXPECT_EQ(starts_, 1);
}

TEST_F(BootThenCommandWaitTest, AStartedCommandIsWaitedForAsTheCommandRouteDoes) {
  // The command is not one this service runs: its wait ends at once and its outcome is read,
  // so the answer is the command's (here: not found), not the boot's.
  auto wait = Wait(10s, core::StartedCommand{"cmd_unknown", 10});
  wait->Start(Recorder());
  Boot("running");
  auto replies = Replies(1);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].status, 404) << replies[0].body;
  EXPECT_EQ(starts_, 1);
}

TEST_F(BootThenCommandWaitTest, AtTheDeadlineTheStartRunsOnceWhoeverComesFirst) {
  // The Waiter's deadline and the server's Expire both come: one start, one answer.
  for (int i = 0; i < 20; ++i) {
    starts_ = 0;
    {
      std::lock_guard lock(mu_);
      replies_.clear();
    }
    auto wait = Wait(std::chrono::milliseconds(i % 4), Status(Code::kConflict, "provisioning"));
    wait->Start(Recorder());
    // Half the rounds, the Waiter's deadline has already begun the start when Expire comes.
    if (i % 2) std::this_thread::sleep_for(20ms);
    wait->Expire();
    auto replies = Replies(1);
    ASSERT_EQ(replies.size(), 1u) << "round " << i;
    EXPECT_EQ(replies[0].status, 409);
    EXPECT_EQ(starts_, 1) << "round " << i;
  }
}

TEST_F(BootThenCommandWaitTest, ExpireAfterTheStartGoesToTheCommandsWait) {
  auto wait = Wait(10s, core::StartedCommand{"cmd_unknown", 10});
  wait->Start(Recorder());
  Boot("running");
  wait->Expire();
  auto replies = Replies(1);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(starts_, 1);
}

TEST_F(BootThenCommandWaitTest, CancelledBeforeTheBootItNeitherStartsNorAnswers) {
  auto wait = Wait(10s, core::StartedCommand{"cmd_unknown", 10});
  wait->Start(Recorder());
  wait->Cancel();
  Boot("running");
  wait->Expire();  // a server would not, after Cancel; nothing may come of it either way
  EXPECT_TRUE(Replies(0).empty());
  EXPECT_EQ(starts_, 0);
}

TEST_F(BootThenCommandWaitTest, DroppedWhileParkedItIsNotCalledBack) {
  auto wait = Wait(200ms, Status(Code::kConflict, "provisioning"));
  wait->Start(Recorder());
  wait.reset();  // the connection went away and nothing holds the wait
  Boot("running");
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(Replies(0).empty());
  EXPECT_EQ(starts_, 0);
}

}  // namespace
}  // namespace adapt::api
