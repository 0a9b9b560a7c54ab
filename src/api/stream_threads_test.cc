#include "api/stream_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace adapt::api {
namespace {

using std::chrono::milliseconds;

TEST(StreamThreads, ShutdownWaitsForARunningPumpAndItsCaptures) {
  std::atomic<bool> release{false};
  auto captured = std::make_shared<int>(7);
  std::weak_ptr<int> watch = captured;
  StartStreamThread([&release, captured = std::move(captured)] {
    while (!release) std::this_thread::sleep_for(milliseconds(5));
  });
  EXPECT_EQ(RunningStreamThreads(), 1u);
  // Still pumping: the wait gives up after its timeout and says so.
  EXPECT_FALSE(WaitForStreamThreads(milliseconds(50)));
  release = true;
  EXPECT_TRUE(WaitForStreamThreads(milliseconds(10000)));
  EXPECT_EQ(RunningStreamThreads(), 0u);
  // What the pump held is released by the time the wait returns.
  EXPECT_TRUE(watch.expired());
}

TEST(StreamThreads, NoneRunningReturnsAtOnce) {
  EXPECT_TRUE(WaitForStreamThreads(milliseconds(0)));
}

}  // namespace
}  // namespace adapt::api
