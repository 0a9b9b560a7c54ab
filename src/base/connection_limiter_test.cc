#include "base/connection_limiter.h"

#include <gtest/gtest.h>

#include <vector>

namespace adapt {
namespace {

TEST(ConnectionLimiter, OneClientGetsAtMostItsShareOthersStillGetIn) {
  ConnectionLimiter limiter("test", {10, 2});
  auto a1 = limiter.Admit("10.0.0.1");
  auto a2 = limiter.Admit("10.0.0.1");
  ASSERT_TRUE(a1 && a2);
  EXPECT_FALSE(limiter.Admit("10.0.0.1"));
  EXPECT_TRUE(limiter.Admit("10.0.0.2"));  // released at once: a temporary
  EXPECT_EQ(limiter.of("10.0.0.1"), 2);
  EXPECT_EQ(limiter.total(), 2);
}

TEST(ConnectionLimiter, TheListenerCapCountsEveryClient) {
  ConnectionLimiter limiter("test", {3, 2});
  std::vector<ConnectionLimiter::Slot> held;
  for (const char* c : {"a", "a", "b"}) {
    auto slot = limiter.Admit(c);
    ASSERT_TRUE(slot) << c;
    held.push_back(std::move(*slot));
  }
  EXPECT_FALSE(limiter.Admit("c"));
  held.pop_back();
  EXPECT_TRUE(limiter.Admit("c"));
}

TEST(ConnectionLimiter, AClosedConnectionGivesItsSlotBack) {
  ConnectionLimiter limiter("test", {0, 1});
  {
    auto slot = limiter.Admit("a");
    ASSERT_TRUE(slot);
    EXPECT_FALSE(limiter.Admit("a"));
    ConnectionLimiter::Slot moved = std::move(*slot);
    EXPECT_EQ(limiter.of("a"), 1);  // a move keeps the one place
  }
  EXPECT_EQ(limiter.of("a"), 0);
  EXPECT_EQ(limiter.total(), 0);
  EXPECT_TRUE(limiter.Admit("a"));
}

TEST(ConnectionLimiter, AnIpv6ClientIsItsWholeSlash64) {
  ConnectionLimiter limiter("test", {0, 1});
  auto first = limiter.Admit("2001:db8:1:2::1");
  ASSERT_TRUE(first);
  EXPECT_FALSE(limiter.Admit("2001:db8:1:2:ffff::9"));
  EXPECT_TRUE(limiter.Admit("2001:db8:1:3::1"));
  EXPECT_EQ(ConnectionLimiter::ClientOf("::ffff:10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(ConnectionLimiter::ClientOf("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(ConnectionLimiter::ClientOf("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
}

TEST(ConnectionLimiter, ZeroMeansNoLimit) {
  ConnectionLimiter limiter("test", {0, 0});
  std::vector<ConnectionLimiter::Slot> held;
  for (int i = 0; i < 1000; ++i) held.push_back(std::move(*limiter.Admit("a")));
  EXPECT_EQ(limiter.total(), 1000);
}

TEST(ConnectionLimiter, ASlotMayOutliveItsLimiter) {
  std::optional<ConnectionLimiter::Slot> slot;
  {
    ConnectionLimiter limiter("test", {1, 1});
    slot = limiter.Admit("a");
  }
  slot.reset();  // no use after free (ASan would say)
  SUCCEED();
}

}  // namespace
}  // namespace adapt
