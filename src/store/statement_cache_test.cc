#include "store/statement_cache.h"

#include <gtest/gtest.h>

namespace adapt::store {
namespace {

class StatementCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
    db_.exec("INSERT INTO t VALUES (1, 'one'), (2, 'two')");
  }
  SQLite::Database db_{":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE};
  StatementCache cache_{db_};
};

TEST_F(StatementCacheTest, AStatementIsPreparedOnceAndBoundAgainEachTime) {
  const std::string sql = "SELECT v FROM t WHERE k = ?";
  for (int k : {1, 2, 1}) {
    auto q = cache_.Get(sql);
    q->bind(1, k);
    ASSERT_TRUE(q->executeStep());
    EXPECT_EQ(q->getColumn(0).getString(), k == 1 ? "one" : "two");
  }
  EXPECT_EQ(cache_.kept(), 1u);
}

TEST_F(StatementCacheTest, ALeaseEndedMidwayLeavesNoReadOpenAndNoBindings) {
  const std::string sql = "SELECT v FROM t WHERE k >= ? ORDER BY k";
  {
    auto q = cache_.Get(sql);
    q->bind(1, 1);
    ASSERT_TRUE(q->executeStep());  // one row of two read, then the lease ends
  }
  // A write succeeds and the next lease starts from the first row, unbound (NULL matches none).
  db_.exec("INSERT INTO t VALUES (3, 'three')");
  auto q = cache_.Get(sql);
  EXPECT_FALSE(q->executeStep());
}

TEST_F(StatementCacheTest, TheSameSqlUsedWhileLentGetsAStatementOfItsOwn) {
  const std::string sql = "SELECT v FROM t WHERE k = ?";
  auto outer = cache_.Get(sql);
  outer->bind(1, 1);
  ASSERT_TRUE(outer->executeStep());
  {
    auto inner = cache_.Get(sql);
    inner->bind(1, 2);
    ASSERT_TRUE(inner->executeStep());
    EXPECT_EQ(inner->getColumn(0).getString(), "two");
  }
  EXPECT_EQ(outer->getColumn(0).getString(), "one");
  EXPECT_EQ(cache_.kept(), 1u);
}

TEST_F(StatementCacheTest, NoMoreThanTheBoundIsKept) {
  for (size_t i = 0; i < StatementCache::kMaxKept + 10; ++i) {
    auto q = cache_.Get("SELECT " + std::to_string(i));
    ASSERT_TRUE(q->executeStep());
    EXPECT_EQ(q->getColumn(0).getInt64(), static_cast<int64_t>(i));
  }
  EXPECT_EQ(cache_.kept(), StatementCache::kMaxKept);
}

TEST_F(StatementCacheTest, BadSqlThrowsAndKeepsNothing) {
  EXPECT_THROW(cache_.Get("SELEKT nonsense"), SQLite::Exception);
  EXPECT_EQ(cache_.kept(), 0u);
}

}  // namespace
}  // namespace adapt::store
