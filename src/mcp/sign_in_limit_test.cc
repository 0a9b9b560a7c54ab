#include "mcp/sign_in_limit.h"

#include <gtest/gtest.h>

namespace adapt::mcp {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(SignInLimit, AnEmailIsRefusedAfterItsFailuresUntilTheOldestLeavesTheWindow) {
  SignInLimit limit({3, 100, seconds(600), 1000});
  auto t0 = SignInLimit::Clock::now();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limit.WaitSeconds("ada@example.com", "10.0.0.1", t0 + seconds(i)), 0) << i;
    limit.Failed("ada@example.com", "10.0.0.1", t0 + seconds(i));
  }
  EXPECT_EQ(limit.WaitSeconds("ada@example.com", "10.0.0.1", t0 + seconds(10)), 590);
  // From another address too: the email is what is being guessed.
  EXPECT_EQ(limit.WaitSeconds("ada@example.com", "10.0.0.2", t0 + seconds(10)), 590);
  EXPECT_EQ(limit.WaitSeconds("bob@example.com", "10.0.0.1", t0 + seconds(10)), 0);
  EXPECT_EQ(limit.WaitSeconds("ada@example.com", "10.0.0.1", t0 + seconds(600)), 0);
}

TEST(SignInLimit, AnAddressIsRefusedAfterFailuresAcrossManyEmails) {
  SignInLimit limit({100, 4, seconds(900), 1000});
  auto t0 = SignInLimit::Clock::now();
  for (int i = 0; i < 4; ++i)
    limit.Failed("user" + std::to_string(i) + "@example.com", "10.0.0.9", t0);
  EXPECT_GT(limit.WaitSeconds("fresh@example.com", "10.0.0.9", t0), 0);
  EXPECT_GT(limit.WaitSeconds("fresh@example.com", "::ffff:10.0.0.9", t0), 0);
  EXPECT_EQ(limit.WaitSeconds("fresh@example.com", "10.0.0.8", t0), 0);
  // IPv6 counts per /64.
  for (int i = 0; i < 4; ++i)
    limit.Failed("x@example.com", "2001:db8::" + std::to_string(i + 1), t0);
  EXPECT_GT(limit.WaitSeconds("y@example.com", "2001:db8::ffff", t0), 0);
  EXPECT_EQ(limit.WaitSeconds("y@example.com", "2001:db8:0:1::1", t0), 0);
}

TEST(SignInLimit, WhenItsTableIsFullNewKeysWaitInsteadOfGuessingFreely) {
  SignInLimit limit({5, 5, seconds(60), 4});
  auto t0 = SignInLimit::Clock::now();
  limit.Failed("a@example.com", "10.0.0.1", t0);
  limit.Failed("b@example.com", "10.0.0.2", t0);
  EXPECT_EQ(limit.WaitSeconds("c@example.com", "10.0.0.1", t0), 60);
  // Once the failures age out, the table empties and new keys are checked again.
  EXPECT_EQ(limit.WaitSeconds("c@example.com", "10.0.0.3", t0 + minutes(2)), 0);
}

}  // namespace
}  // namespace adapt::mcp
