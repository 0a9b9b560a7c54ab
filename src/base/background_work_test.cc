#include "base/background_work.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <new>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/captured_log.h"
#include "base/log.h"

namespace adapt {
namespace {

TEST(RunGuarded, WorkThatReturnsRunsOnceAndDoesNotCallOnFault) {
  int runs = 0;
  bool faulted = false;
  RunGuarded(
      "quiet work", [&] { ++runs; }, [&](const std::string&) { faulted = true; });
  EXPECT_EQ(runs, 1);
  EXPECT_FALSE(faulted);
}

TEST(RunGuarded, AThrownExceptionIsLoggedAsAnErrorNamingTheWorkAndHandedToOnFault) {
  CapturedLog log;
  std::string handed;
  RunGuarded(
      "image pull img_x", [] { throw std::runtime_error("type must be string, but is number"); },
      [&](const std::string& error) { handed = error; });
  EXPECT_EQ(handed, "internal error: type must be string, but is number");
  EXPECT_NE(log.Text().find("error image pull img_x: internal error: type must be string"),
            std::string::npos)
      << log.Text();
}

TEST(RunGuarded, ANonStandardExceptionAndBadAllocAreCaughtToo) {
  CapturedLog log;
  std::string handed;
  RunGuarded(
      "odd work", [] { throw 42; }, [&](const std::string& error) { handed = error; });
  EXPECT_EQ(handed, "internal error: an exception that is not a std::exception");
  RunGuarded(
      "big work", [] { throw std::bad_alloc(); },
      [&](const std::string& error) { handed = error; });
  EXPECT_EQ(handed, "internal error: std::bad_alloc");
}

TEST(RunGuarded, AnExceptionFromOnFaultIsLoggedAndSwallowed) {
  CapturedLog log;
  RunGuarded(
      "commit img_y", [] { throw std::runtime_error("first"); },
      [](const std::string&) { throw std::runtime_error("second"); });
  std::string text = log.Text();
  EXPECT_NE(text.find("commit img_y: internal error: first"), std::string::npos) << text;
  EXPECT_NE(text.find("commit img_y: settling its failure: internal error: second"),
            std::string::npos)
      << text;
}

TEST(Guarded, AThreadPoolRunsItsNextTaskAfterOneThrew) {
  CapturedLog log;
  boost::asio::thread_pool pool(1);
  std::promise<void> next_ran;
  std::promise<std::string> fault;
  boost::asio::post(pool, Guarded(
                              "throwing task", [] { throw std::logic_error("bad task"); },
                              [&](const std::string& error) { fault.set_value(error); }));
  boost::asio::post(pool, Guarded("next task", [&] { next_ran.set_value(); }));
  EXPECT_EQ(fault.get_future().get(), "internal error: bad task");
  next_ran.get_future().get();  // without the guard, the first task ends the process
  pool.join();
  EXPECT_NE(log.Text().find("throwing task: internal error: bad task"), std::string::npos);
}

TEST(Guarded, OwnsMoveOnlyStateAndMayMoveItOut) {
  auto owned = std::make_unique<int>(7);
  int seen = 0;
  auto task = Guarded("move-only", [owned = std::move(owned), &seen]() mutable {
    std::unique_ptr<int> mine = std::move(owned);
    seen = *mine;
  });
  std::thread(std::move(task)).join();
  EXPECT_EQ(seen, 7);
}

TEST(RunGuarded, ALoopingThreadSurvivesOneThrowingIterationAndGoesOn) {
  CapturedLog log;
  std::atomic<int> passes = 0;
  std::thread looping(Guarded("sweeper", [&] {
    for (int i = 0; i < 3; ++i)
      RunGuarded("sweeper pass", [&] {
        if (i == 1) throw std::runtime_error("one bad pass");
        ++passes;
      });
  }));
  looping.join();
  EXPECT_EQ(passes, 2);  // the passes before and after the bad one
  EXPECT_NE(log.Text().find("sweeper pass: internal error: one bad pass"), std::string::npos);
}

TEST(RunGuardedUntilDone, CallsTheWorkAgainAfterItThrewUntilItReturns) {
  CapturedLog log;
  int calls = 0;
  RunGuardedUntilDone("io thread", [&] {
    if (++calls < 3) throw std::runtime_error("handler threw");
  });
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace adapt
