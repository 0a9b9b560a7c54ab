#include "core/waiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

namespace adapt::core {
namespace {

using namespace std::chrono_literals;
using End = Waiter::End;

Change CommandEnded(const std::string& id) { return {Change::Kind::kCommandEnded, id}; }

// Collects how one wait ended.
struct Outcome {
  std::promise<End> promise;
  std::future<End> future = promise.get_future();
  Waiter::Done Done() {
    return [this](End how) { promise.set_value(how); };
  }
  bool Ended() { return future.wait_for(0s) == std::future_status::ready; }
};

TEST(Waiter, EndsReadyWhenASignalMakesTheCheckTrue) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool);
  std::atomic<bool> ended{false};
  Outcome outcome;
  waiter.Start(
      CommandEnded("cmd_a"), Waiter::Clock::now() + 30s, [&] { return ended.load(); },
      outcome.Done());
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(outcome.Ended());
  ended = true;
  bus.Notify(CommandEnded("cmd_a"));
  ASSERT_EQ(outcome.future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(outcome.future.get(), End::kReady);
  EXPECT_EQ(waiter.size(), 0u);
  pool.join();
}

TEST(Waiter, EndsAtItsDeadlineWhenNothingSignals) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool);
  Outcome outcome;
  auto start = Waiter::Clock::now();
  waiter.Start(
      CommandEnded("cmd_a"), start + 200ms, [] { return false; }, outcome.Done());
  ASSERT_EQ(outcome.future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(outcome.future.get(), End::kDeadline);
  EXPECT_GE(Waiter::Clock::now() - start, 200ms);
  pool.join();
}

TEST(Waiter, ACheckTrueAlreadyEndsTheWaitWithoutASignal) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool);
  Outcome outcome;
  waiter.Start(
      CommandEnded("cmd_a"), Waiter::Clock::now() + 30s, [] { return true; }, outcome.Done());
  ASSERT_EQ(outcome.future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(outcome.future.get(), End::kReady);
  pool.join();
}

TEST(Waiter, SignalsOfOtherChangesDoNotRunTheCheck) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool);
  std::atomic<int> checks{0};
  Outcome outcome;
  auto handle = waiter.Start(
      CommandEnded("cmd_a"), Waiter::Clock::now() + 30s,
      [&] {
        ++checks;
        return false;
      },
      outcome.Done());
  std::this_thread::sleep_for(50ms);
  bus.Notify(CommandEnded("cmd_b"));
  bus.Notify({Change::Kind::kSandboxStatus, "cmd_a"});
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(checks.load(), 1);  // the first check only
  bus.Notify(CommandEnded("cmd_a"));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(checks.load(), 2);
  handle.Cancel();
  EXPECT_EQ(outcome.future.get(), End::kCancelled);
  pool.join();
}

TEST(Waiter, ThousandsOfWaitsHoldNoThreadOfAOneThreadPool) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool);
  constexpr int kWaits = 2000;
  std::atomic<bool> ended{false};
  std::atomic<int> ready{0}, others{0};
  for (int i = 0; i < kWaits; ++i)
    waiter.Start(
        CommandEnded("cmd_" + std::to_string(i % 10)), Waiter::Clock::now() + 60s,
        [&] { return ended.load(); },
        [&](End how) {
          if (how == End::kReady)
            ++ready;
          else
            ++others;
        });
  // The pool's one thread is free while they all wait: other work runs at once.
  std::promise<void> ran;
  boost::asio::post(pool, [&] { ran.set_value(); });
  ASSERT_EQ(ran.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_EQ(waiter.size(), static_cast<size_t>(kWaits));
  ended = true;
  for (int i = 0; i < 10; ++i) bus.Notify(CommandEnded("cmd_" + std::to_string(i)));
  for (int i = 0; i < 500 && ready.load() < kWaits; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ready.load(), kWaits);
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(waiter.size(), 0u);
  pool.join();
}

TEST(Waiter, ShutdownEndsEveryWaitSoThePoolCanBeJoined) {
  boost::asio::thread_pool pool(2);
  EventBus bus;
  Waiter waiter(bus, pool);
  Outcome a, b;
  waiter.Start(
      CommandEnded("cmd_a"), Waiter::Clock::now() + 600s, [] { return false; }, a.Done());
  waiter.Start({Change::Kind::kSandboxStatus, "sbx_a"}, Waiter::Clock::now() + 600s,
               [] { return false; }, b.Done(), {10ms, 10ms, [] {}});
  std::this_thread::sleep_for(50ms);
  waiter.Shutdown();
  auto start = Waiter::Clock::now();
  pool.join();  // nothing is left on the pool: no timer of 600 s holds it
  EXPECT_LT(Waiter::Clock::now() - start, 5s);
  EXPECT_EQ(a.future.get(), End::kCancelled);
  EXPECT_EQ(b.future.get(), End::kCancelled);
  Outcome late;
  waiter.Start(
      CommandEnded("cmd_c"), Waiter::Clock::now() + 600s, [] { return false; }, late.Done());
  EXPECT_EQ(waiter.size(), 0u);
}

TEST(Waiter, PastTheCapAWaitEndsAfterItsFirstCheck) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool, /*max_waits=*/1);
  Outcome first, second, third;
  auto handle = waiter.Start(
      CommandEnded("cmd_a"), Waiter::Clock::now() + 30s, [] { return false; }, first.Done());
  waiter.Start(
      CommandEnded("cmd_b"), Waiter::Clock::now() + 30s, [] { return false; }, second.Done());
  waiter.Start(
      CommandEnded("cmd_c"), Waiter::Clock::now() + 30s, [] { return true; }, third.Done());
  EXPECT_EQ(second.future.get(), End::kDeadline);  // the state now, as a wait of 0 s
  EXPECT_EQ(third.future.get(), End::kReady);
  EXPECT_FALSE(first.Ended());
  handle.Cancel();
  EXPECT_EQ(first.future.get(), End::kCancelled);
  pool.join();
}

TEST(Waiter, TicksReportWhileItWaitsAndStopWhenItEnds) {
  boost::asio::thread_pool pool(1);
  EventBus bus;
  Waiter waiter(bus, pool);
  std::atomic<int> ticks{0};
  Outcome outcome;
  waiter.Start(CommandEnded("cmd_a"), Waiter::Clock::now() + 350ms, [] { return false; },
               outcome.Done(), {50ms, 100ms, [&] { ++ticks; }});
  EXPECT_EQ(outcome.future.get(), End::kDeadline);
  int at_end = ticks.load();
  EXPECT_GE(at_end, 2);
  EXPECT_LE(at_end, 4);
  std::this_thread::sleep_for(250ms);
  EXPECT_EQ(ticks.load(), at_end);
  pool.join();
}

}  // namespace
}  // namespace adapt::core
