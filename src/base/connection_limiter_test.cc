#include "base/connection_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
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

// A slot whose eviction is recorded in `log` (its name), as a connection's would post its close.
ConnectionLimiter::Slot Evictable(ConnectionLimiter& limiter, const std::string& address,
                                  std::shared_ptr<std::vector<std::string>> log,
                                  const std::string& name) {
  auto slot = limiter.Admit(address);
  EXPECT_TRUE(slot) << name;
  slot->OnEvict([log, name] { log->push_back(name); });
  return std::move(*slot);
}

TEST(ConnectionLimiter, AFullListenerEvictsTheLongestIdleConnectionFirst) {
  ConnectionLimiter limiter("test", {3, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  auto a = Evictable(limiter, "10.0.0.1", evicted, "a");
  auto b = Evictable(limiter, "10.0.0.2", evicted, "b");
  auto c = Evictable(limiter, "10.0.0.3", evicted, "c");
  a.MarkIdle();
  b.MarkIdle();
  c.MarkIdle();
  a.MarkBusy();  // a request of a kept-alive connection: waiting again, it is the newest
  a.MarkIdle();
  b.MarkIdle();  // already idle: keeps its place
  int total_seen = -1;
  auto d = limiter.Admit("10.0.0.4");
  ASSERT_TRUE(d);
  EXPECT_EQ(*evicted, std::vector<std::string>{"b"});
  EXPECT_TRUE(b.evicted());
  EXPECT_FALSE(a.evicted());
  // The callback runs without the limiter's lock: it may call the limiter. c comes next.
  c.OnEvict([&] { total_seen = limiter.total(); });
  ASSERT_TRUE(limiter.Admit("10.0.0.5"));  // a temporary: released at once
  EXPECT_EQ(total_seen, 5);
  EXPECT_TRUE(c.evicted());
  EXPECT_FALSE(a.evicted());
  EXPECT_EQ(limiter.total(), 4);  // evicted connections count until they end
}

// Two connections accepted one after the other may start waiting in the other order (their
// sessions start on two threads): the one admitted first has still waited longest. The ingress
// once closed the second of a full listener's connections for a new client (an e2e test saw it
// under load).
TEST(ConnectionLimiter, AFirstWaitCountsFromTheAdmissionWhateverOrderTheWaitsBeginIn) {
  ConnectionLimiter limiter("test", {4, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  // Admitted before the others, but busy before it waits: its wait counts from its start.
  auto busy_first = Evictable(limiter, "10.0.0.6", evicted, "busy first");
  busy_first.MarkBusy();
  auto first = Evictable(limiter, "10.0.0.1", evicted, "first");
  auto second = Evictable(limiter, "10.0.0.2", evicted, "second");
  auto third = Evictable(limiter, "10.0.0.3", evicted, "third");
  third.MarkIdle();
  second.MarkIdle();
  first.MarkIdle();
  busy_first.MarkIdle();
  auto fourth = limiter.Admit("10.0.0.4");
  ASSERT_TRUE(fourth);
  ASSERT_TRUE(limiter.Admit("10.0.0.5"));
  EXPECT_EQ(*evicted, (std::vector<std::string>{"first", "second"}));
}

TEST(ConnectionLimiter, ABusyConnectionOrOneWithoutAnEvictionIsNeverEvicted) {
  ConnectionLimiter limiter("test", {2, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  auto busy = Evictable(limiter, "10.0.0.1", evicted, "busy");
  auto unclosable = limiter.Admit("10.0.0.2");
  ASSERT_TRUE(unclosable);
  unclosable->MarkIdle();  // no OnEvict: the listener cannot close it
  EXPECT_FALSE(limiter.Admit("10.0.0.3"));
  EXPECT_TRUE(evicted->empty());
  EXPECT_FALSE(busy.evicted());
  EXPECT_EQ(limiter.total(), 2);
}

TEST(ConnectionLimiter, AClientAtItsOwnCapIsRefusedAndEvictsNobody) {
  ConnectionLimiter limiter("test", {3, 1});
  auto evicted = std::make_shared<std::vector<std::string>>();
  auto mine = Evictable(limiter, "10.0.0.1", evicted, "mine");
  auto other = Evictable(limiter, "10.0.0.2", evicted, "other");
  auto third = Evictable(limiter, "10.0.0.3", evicted, "third");
  mine.MarkIdle();
  other.MarkIdle();
  EXPECT_FALSE(limiter.Admit("10.0.0.1"));
  EXPECT_TRUE(evicted->empty());
  EXPECT_TRUE(limiter.Admit("10.0.0.4"));  // another address makes room
  EXPECT_EQ(*evicted, std::vector<std::string>{"mine"});
}

TEST(ConnectionLimiter, ASlotMarkedBusyAgainIsNoLongerACandidate) {
  ConnectionLimiter limiter("test", {1, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  auto a = Evictable(limiter, "10.0.0.1", evicted, "a");
  a.MarkIdle();
  a.MarkBusy();
  EXPECT_FALSE(limiter.Admit("10.0.0.2"));
  EXPECT_TRUE(evicted->empty());
}

TEST(ConnectionLimiter, MarkingBusyWithdrawsAnEvictionNotYetCarriedOut) {
  ConnectionLimiter limiter("test", {1, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  auto a = Evictable(limiter, "10.0.0.1", evicted, "a");
  a.MarkIdle();
  auto b = Evictable(limiter, "10.0.0.2", evicted, "b");
  EXPECT_TRUE(a.evicted());
  a.MarkBusy();  // its request arrived before its strand carried the eviction out
  EXPECT_FALSE(a.evicted());
  EXPECT_EQ(limiter.total(), 2);
  // Both are busy now, so the next one waits for one of them to end.
  EXPECT_FALSE(limiter.Admit("10.0.0.3"));
  b.MarkIdle();
  EXPECT_TRUE(limiter.Admit("10.0.0.3"));
  EXPECT_EQ(*evicted, (std::vector<std::string>{"a", "b"}));
}

TEST(ConnectionLimiter, CountsStayRightWhenEvictedConnectionsEndLater) {
  ConnectionLimiter limiter("test", {2, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  std::optional<ConnectionLimiter::Slot> a = Evictable(limiter, "10.0.0.1", evicted, "a");
  std::optional<ConnectionLimiter::Slot> b = Evictable(limiter, "10.0.0.1", evicted, "b");
  a->MarkIdle();
  b->MarkIdle();
  std::optional<ConnectionLimiter::Slot> c = Evictable(limiter, "10.0.0.2", evicted, "c");
  auto d = Evictable(limiter, "10.0.0.2", evicted, "d");
  EXPECT_EQ(*evicted, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(limiter.total(), 4);
  EXPECT_EQ(limiter.of("10.0.0.1"), 2);
  EXPECT_FALSE(limiter.Admit("10.0.0.3"));  // c and d are busy
  a.reset();
  EXPECT_EQ(limiter.total(), 3);
  EXPECT_FALSE(limiter.Admit("10.0.0.3"));  // an evicted one ending makes no new room
  b.reset();
  c.reset();
  EXPECT_EQ(limiter.total(), 1);
  EXPECT_EQ(limiter.of("10.0.0.1"), 0);
  EXPECT_EQ(limiter.of("10.0.0.2"), 1);
  EXPECT_TRUE(limiter.Admit("10.0.0.3"));
  EXPECT_EQ(evicted->size(), 2u);
}

TEST(ConnectionLimiter, EvictedConnectionsThatDoNotEndHoldAtMostTheHeadroom) {
  ConnectionLimiter limiter("test", {1, 0});
  auto evicted = std::make_shared<std::vector<std::string>>();
  std::vector<ConnectionLimiter::Slot> held;
  for (int i = 0; i < ConnectionLimiter::kEvictionHeadroom + 10; ++i) {
    auto slot = limiter.Admit("10.0.0." + std::to_string(i % 200));
    if (!slot) break;
    slot->OnEvict([evicted] { evicted->push_back("x"); });
    slot->MarkIdle();
    held.push_back(std::move(*slot));
  }
  EXPECT_EQ(limiter.total(), 1 + ConnectionLimiter::kEvictionHeadroom);
  EXPECT_EQ(static_cast<int>(evicted->size()), ConnectionLimiter::kEvictionHeadroom);
  held.erase(held.begin());  // one ends: room for one more
  EXPECT_TRUE(limiter.Admit("10.0.0.1"));
}

TEST(ConnectionLimiter, ConcurrentAdmitsEvictionsAndReleasesKeepTheCounts) {
  constexpr int kCap = 16;
  ConnectionLimiter limiter("test", {kCap, 8});
  std::atomic<int> over_headroom{0};
  std::atomic<int> evictions{0};
  auto run = [&](int seed) {
    std::mt19937 random(seed);
    std::vector<std::pair<ConnectionLimiter::Slot, std::shared_ptr<std::atomic<bool>>>> mine;
    for (int i = 0; i < 4000; ++i) {
      switch (random() % 4) {
        case 0:
        case 1: {
          auto slot = limiter.Admit("10.0.0." + std::to_string(random() % 5));
          if (!slot) break;
          auto flag = std::make_shared<std::atomic<bool>>(false);
          slot->OnEvict([flag, &evictions] {
            flag->store(true);
            ++evictions;
          });
          slot->MarkIdle();
          mine.emplace_back(std::move(*slot), flag);
          break;
        }
        case 2:
          if (!mine.empty()) {
            auto& [slot, flag] = mine[random() % mine.size()];
            random() % 2 ? slot.MarkBusy() : slot.MarkIdle();
          }
          break;
        default:
          // An evicted connection ends; others end now and then.
          for (size_t j = 0; j < mine.size();) {
            if (mine[j].second->load() || random() % 8 == 0) {
              mine.erase(mine.begin() + static_cast<long>(j));
            } else {
              ++j;
            }
          }
      }
      if (limiter.total() > kCap + ConnectionLimiter::kEvictionHeadroom) ++over_headroom;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) threads.emplace_back(run, t);
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(over_headroom.load(), 0);
  EXPECT_GT(evictions.load(), 0);
  EXPECT_EQ(limiter.total(), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(limiter.of("10.0.0." + std::to_string(i)), 0);
}

}  // namespace
}  // namespace adapt
