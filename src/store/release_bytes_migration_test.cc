// Migration 39: a site release written before it gets its bytes (the sum of its files' sizes),
// so that it counts against its organization's object storage quota like a new one.
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

TEST_F(SqliteStoreTest, MigrationThirtyNineCountsTheBytesOfSiteReleasesWrittenBefore) {
  const std::string old_path = dir_ + "/v38.db";
  {
    SQLite::Database db(old_path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    MigrateUpTo(db, 39);
    db.exec(R"(INSERT INTO site_releases(id, site_id, org_id, source_prefix, files, created_at)
      VALUES ('rel_a', 'site_a', 'org_old', 'web/',
              '{"index.html":{"blob":"b1","size":1000,"type":"text/html","sha256":""},
                "a.css":{"blob":"b2","size":24,"type":"text/css","sha256":""}}', 1),
             ('rel_b', 'site_a', 'org_old', 'web/', '{}', 2))");
  }
  auto opened = OpenSqliteStore(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  auto bytes = (*opened)->ObjectBytes("org_old");
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_EQ(*bytes, 1024u);
}

}  // namespace
}  // namespace adapt::store
