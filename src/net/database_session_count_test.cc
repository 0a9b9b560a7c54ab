// The database proxy's session accounting: one database gets its role's limit plus a margin,
// every database together gets the server's share, and each release gives one place back to
// both counts.
#include "net/database_session_count.h"

#include <gtest/gtest.h>

namespace adapt::net {
namespace {

using Admission = DatabaseSessionCount::Admission;
constexpr int64_t kMargin = DatabaseSessionCount::kSessionMargin;

TEST(DatabaseSessionCount, ADatabaseGetsItsLimitPlusTheMarginAndNoMore) {
  DatabaseSessionCount count(0);
  for (int i = 0; i < 1 + kMargin; ++i) ASSERT_EQ(count.Admit("a", 1), Admission::kAdmitted);
  EXPECT_EQ(count.Admit("a", 1), Admission::kDatabaseFull);
  EXPECT_EQ(count.Admit("b", 1), Admission::kAdmitted) << "another database has its own count";
  EXPECT_EQ(count.open("a"), 1 + kMargin) << "a refusal was counted";
  EXPECT_EQ(count.open(), 2 + kMargin);
}

TEST(DatabaseSessionCount, EveryDatabaseTogetherGetsTheServerLimitAndNoMore) {
  DatabaseSessionCount count(3);
  EXPECT_EQ(count.Admit("a", 0), Admission::kAdmitted);
  EXPECT_EQ(count.Admit("b", 10), Admission::kAdmitted);
  EXPECT_EQ(count.Admit("c", 0), Admission::kAdmitted);
  EXPECT_EQ(count.Admit("d", 10), Admission::kServerFull);
  EXPECT_EQ(count.Admit("a", 0), Admission::kServerFull) << "no limit of its own is no exception";
  EXPECT_EQ(count.open(), 3) << "a refusal was counted";
  EXPECT_EQ(count.open("d"), 0);
}

TEST(DatabaseSessionCount, ADatabaseAtItsOwnLimitIsToldSoEvenWhenTheServerIsFull) {
  DatabaseSessionCount count(1 + kMargin);
  for (int i = 0; i < 1 + kMargin; ++i) ASSERT_EQ(count.Admit("a", 1), Admission::kAdmitted);
  EXPECT_EQ(count.Admit("a", 1), Admission::kDatabaseFull);
  EXPECT_EQ(count.Admit("b", 1), Admission::kServerFull);
}

TEST(DatabaseSessionCount, AReleaseGivesItsPlaceBackToTheDatabaseAndTheServer) {
  DatabaseSessionCount count(2);
  ASSERT_EQ(count.Admit("a", 1), Admission::kAdmitted);
  ASSERT_EQ(count.Admit("b", 0), Admission::kAdmitted);
  ASSERT_EQ(count.Admit("c", 0), Admission::kServerFull);
  count.Release("a");
  EXPECT_EQ(count.open("a"), 0);
  EXPECT_EQ(count.open(), 1);
  EXPECT_EQ(count.Admit("c", 0), Admission::kAdmitted);
  EXPECT_EQ(count.Admit("a", 1), Admission::kServerFull);
  count.Release("b");
  count.Release("c");
  EXPECT_EQ(count.open(), 0);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(count.Admit("a", 0), Admission::kAdmitted);
}

TEST(DatabaseSessionCount, AReleaseOfADatabaseWithNothingOpenChangesNothing) {
  DatabaseSessionCount count(1);
  ASSERT_EQ(count.Admit("a", 0), Admission::kAdmitted);
  count.Release("b");
  EXPECT_EQ(count.open(), 1);
  EXPECT_EQ(count.Admit("b", 0), Admission::kServerFull);
}

// An external server resized: sessions open past a lower limit stay, new ones wait for room.
TEST(DatabaseSessionCount, ALowerLimitKeepsTheOpenSessionsAndAdmitsNoneUntilThereIsRoom) {
  DatabaseSessionCount count(0);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(count.Admit("a", 0), Admission::kAdmitted);
  count.set_server_limit(2);
  EXPECT_EQ(count.open(), 3);
  EXPECT_EQ(count.Admit("b", 0), Admission::kServerFull);
  count.Release("a");
  EXPECT_EQ(count.Admit("b", 0), Admission::kServerFull) << "2 open, the limit";
  count.Release("a");
  EXPECT_EQ(count.Admit("b", 0), Admission::kAdmitted);
  count.set_server_limit(0);
  EXPECT_EQ(count.Admit("c", 0), Admission::kAdmitted) << "0: no limit";
}

}  // namespace
}  // namespace adapt::net
