// Migration 37 on a database an older adaptd wrote: endpoints, storage tokens, API keys and
// users keep every row, gain an insertion sequence in their creation order (created_at, then
// the order they were written), and a row written afterwards comes after all of them.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/migrations.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::MigrateUpTo;
using testing_support::SqliteStoreTest;

// A database at migration 36 with rows in each table migration 37 rebuilds, written out of
// creation order.
void WriteVersion36Database(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  MigrateUpTo(db, 37);
  for (const auto& [id, at] :
       std::vector<std::pair<std::string, int>>{{"c", 3000}, {"a", 1000}, {"b", 2000}}) {
    db.exec("INSERT INTO endpoints VALUES ('ep_" + id + "', 'org_old', 'sbx_x', 80, 'h" + id +
            "', " + std::to_string(at) + ")");
    db.exec("INSERT INTO storage_tokens VALUES ('stk_" + id + "', 'org_old', '', 't', 9, 0, " +
            std::to_string(at) + ")");
    db.exec("INSERT INTO api_keys VALUES ('key_" + id + "', 'org_old', 'k', 'hash" + id + "', 0, " +
            std::to_string(at) + ", 0)");
    db.exec("INSERT INTO users VALUES ('usr_" + id + "', 'org_old', '" + id +
            "@example.com', 'h', " + std::to_string(at) + ")");
  }
}

template <typename T>
std::vector<std::string> IdsListed(const Result<std::vector<T>>& rows) {
  std::vector<std::string> out;
  if (rows.ok())
    for (const auto& r : *rows) out.push_back(r.id);
  return out;
}

template <typename T>
void ExpectSequenceInListOrder(const Result<std::vector<T>>& rows) {
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  for (size_t i = 1; i < rows->size(); ++i) EXPECT_LT((*rows)[i - 1].seq, (*rows)[i].seq) << i;
}

TEST_F(SqliteStoreTest, MigrationThirtySixKeepsRowsAndNumbersThemInCreationOrder) {
  const std::string old_path = dir_ + "/v35.db";
  WriteVersion36Database(old_path);
  auto opened = OpenSqliteStore(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Store& migrated = **opened;

  auto endpoints = migrated.ListEndpoints("org_old", "");
  EXPECT_EQ(IdsListed(endpoints), (std::vector<std::string>{"ep_a", "ep_b", "ep_c"}));
  ExpectSequenceInListOrder(endpoints);
  auto tokens = migrated.ListStorageTokens("org_old");
  EXPECT_EQ(IdsListed(tokens), (std::vector<std::string>{"stk_a", "stk_b", "stk_c"}));
  ExpectSequenceInListOrder(tokens);
  auto keys = migrated.ListApiKeys("org_old");
  EXPECT_EQ(IdsListed(keys), (std::vector<std::string>{"key_a", "key_b", "key_c"}));
  ExpectSequenceInListOrder(keys);
  auto users = migrated.ListUsers("org_old");
  EXPECT_EQ(IdsListed(users), (std::vector<std::string>{"usr_a", "usr_b", "usr_c"}));
  ExpectSequenceInListOrder(users);

  // Written after the migration, even with an older created_at: after every migrated row.
  auto target = migrated.CreateSandbox(Sandbox("org_old", "x"), std::nullopt);
  ASSERT_TRUE(target.ok()) << target.status().message();
  ASSERT_TRUE(
      migrated.PutEndpoint({"ep_new", "org_old", target->sandbox.id, 81, "hnew", 10}, std::nullopt)
          .ok());
  auto after = migrated.ListEndpoints("org_old", "");
  EXPECT_EQ(IdsListed(after), (std::vector<std::string>{"ep_a", "ep_b", "ep_c", "ep_new"}));
  ExpectSequenceInListOrder(after);
}

}  // namespace
}  // namespace adapt::store
