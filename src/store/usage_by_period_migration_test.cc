// Migration 42: the usage report's query reads its organization's usage entries of its period
// through their index (a range), not every entry of the organization; the report itself is
// what it was (its sums per subject, from the entries of the period only).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>

#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::SqliteStoreTest;

TEST_F(SqliteStoreTest, MigrationFortyTwoLetsTheUsageReportReadOnlyItsPeriod) {
  const std::string path = dir_ + "/usage.db";
  {
    auto opened = OpenSqliteStore(path);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
  }
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  // The shape of SqliteStore::UsageBetween's WHERE (sqlite_usage.cc).
  SQLite::Statement plan(db,
                         "EXPLAIN QUERY PLAN SELECT l.subject_id, SUM(l.amount_nanos) FROM ledger "
                         "l WHERE l.org_id = ? AND l.kind = 'usage' AND l.period_start >= ? AND "
                         "l.period_start < ? GROUP BY l.subject_kind, l.subject_id");
  std::string steps;
  while (plan.executeStep()) steps += plan.getColumn(3).getString() + "\n";
  EXPECT_NE(steps.find("INDEX ledger_usage_by_period (org_id=? AND period_start>? AND "
                       "period_start<?)"),
            std::string::npos)
      << steps;
}

}  // namespace
}  // namespace adapt::store
