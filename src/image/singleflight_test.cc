#include "image/singleflight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>

namespace adapt::image {
namespace {

// Runs `second` on another thread once it waits on the work `first` holds for "k", then lets
// `first` end with `end()`. Returns what the second call returned.
Status WhileLeading(Singleflight& flight, const std::function<Status()>& end,
                    const std::function<Status()>& second) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> leading;
  std::thread leader([&] {
    try {
      (void)flight.Do("k", [&]() -> Status {
        leading.set_value();
        released.wait();
        return end();
      });
    } catch (const std::exception&) {  // the leader's own exception: not what is tested here
    }
  });
  leading.get_future().wait();
  std::future<Status> follower = std::async(std::launch::async, second);
  while (flight.Waiting("k") == 0) std::this_thread::yield();
  release.set_value();
  leader.join();
  return follower.get();
}

TEST(Singleflight, WorkThatThrowsFreesItsKeyForTheNextCall) {
  Singleflight flight;
  EXPECT_THROW((void)flight.Do("k", []() -> Status { throw std::runtime_error("boom"); }),
               std::runtime_error);
  // Before: the key stayed in flight with a promise nobody would keep, and every later call
  // for it got std::future_error.
  int runs = 0;
  Status st = flight.Do("k", [&] {
    ++runs;
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(flight.Waiting("k"), 0);
}

TEST(Singleflight, AWaiterSharesTheLeadersExceptionByDefault) {
  Singleflight flight;
  bool got_exception = false;
  Status st = WhileLeading(
      flight, []() -> Status { throw std::runtime_error("boom"); },
      [&] {
        try {
          return flight.Do("k", [] { return Status::Ok(); });
        } catch (const std::runtime_error&) {
          got_exception = true;
          return Status::Ok();
        }
      });
  EXPECT_TRUE(got_exception);
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(Singleflight, AWaiterSharesTheLeadersErrorByDefault) {
  Singleflight flight;
  std::atomic<int> runs = 0;
  Status st = WhileLeading(
      flight, [] { return Internal("the leader's error"); },
      [&] {
        return flight.Do("k", [&] {
          ++runs;
          return Status::Ok();
        });
      });
  EXPECT_EQ(st.message(), "the leader's error");
  EXPECT_EQ(runs, 0);
}

TEST(Singleflight, WithRetryAWaiterWhoseLeaderFailedRunsTheWorkItself) {
  Singleflight flight;
  std::atomic<int> runs = 0;
  auto own = [&] {
    ++runs;
    return Status::Ok();
  };
  Status st = WhileLeading(
      flight, [] { return Internal("the leader's own registry failed"); },
      [&] { return flight.Do("k", own, Singleflight::OnFailure::kRetry); });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(runs, 1);
  st = WhileLeading(
      flight, []() -> Status { throw std::runtime_error("boom"); },
      [&] { return flight.Do("k", own, Singleflight::OnFailure::kRetry); });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(runs, 2);
}

TEST(Singleflight, WithRetryAWaiterTakesTheLeadersSuccess) {
  Singleflight flight;
  std::atomic<int> runs = 0;
  Status st = WhileLeading(
      flight, [] { return Status::Ok(); },
      [&] {
        return flight.Do(
            "k",
            [&] {
              ++runs;
              return Internal("not run");
            },
            Singleflight::OnFailure::kRetry);
      });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(runs, 0);
}

}  // namespace
}  // namespace adapt::image
