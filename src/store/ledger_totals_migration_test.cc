// Migration 41: an organization's ledger totals are kept beside its ledger. A ledger written
// before it is summed once by the migration, and the balance read afterwards (the kept totals
// and the credits not yet expired) is what summing every entry gave, appends included.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>

#include "store/migrations.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::MigrateUpTo;
using testing_support::SqliteStoreTest;

TEST_F(SqliteStoreTest, MigrationFortyOneKeepsTheLedgersTotalsOfEachOrganization) {
  const std::string old_path = dir_ + "/v40.db";
  {
    SQLite::Database db(old_path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    MigrateUpTo(db, 41);
    // MigrateUpTo made org_old.
    db.exec("INSERT INTO orgs(id, name, created_at) VALUES ('org_two', 'two', 1)");
    // A lasting credit of 50, one of 7 lapsing at 1000, usage of 3 and 4; another
    // organization's credit of 100 and usage of 1.
    db.exec(R"(INSERT INTO ledger(id, org_id, kind, amount_nanos, reason, expires_at, created_at)
      VALUES ('led_a', 'org_old', 'credit', 50, 'grant', NULL, 1),
             ('led_b', 'org_old', 'credit', 7, 'trial', 1000, 2),
             ('led_c', 'org_old', 'usage', 3, 'cpu', NULL, 3),
             ('led_d', 'org_old', 'usage', 4, 'cpu', NULL, 4),
             ('led_e', 'org_two', 'credit', 100, 'grant', NULL, 5),
             ('led_f', 'org_two', 'usage', 1, 'cpu', NULL, 6))");
  }
  auto opened = OpenSqliteStore(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Store& store = **opened;
  auto before = store.LedgerTotals("org_old", 999);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_EQ(before->credits_nanos, 57);
  EXPECT_EQ(before->usage_nanos, 7);
  EXPECT_EQ(*store.Balance("org_old", 1000), 43);  // the trial has lapsed
  EXPECT_EQ(*store.Balance("org_two", 0), 99);
  EXPECT_EQ(*store.Balance("org_none", 0), 0);

  LedgerEntryRecord e;
  e.id = "led_g";
  e.org_id = "org_old";
  e.kind = "credit";
  e.amount_nanos = 20;
  e.reason = "top-up";
  e.expires_at = 5000;
  e.created_at = 7;
  ASSERT_TRUE(store.AppendLedgerEntry(e).ok());
  e.id = "led_h";
  e.kind = "usage";
  e.amount_nanos = 6;
  e.expires_at.reset();
  ASSERT_TRUE(store.AppendLedgerEntry(e).ok());
  ASSERT_TRUE(store.AppendLedgerEntry(e).ok());  // a retry charges nothing twice
  EXPECT_EQ(*store.Balance("org_old", 999), 50 + 7 + 20 - 13);
  EXPECT_EQ(*store.Balance("org_old", 5000), 50 - 13);
  EXPECT_EQ(*store.Balance("org_two", 0), 99);
}

}  // namespace
}  // namespace adapt::store
