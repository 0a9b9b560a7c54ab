// Migration 40: an app's replicas that an older adaptd labelled `adapt-app` take the reserved
// `platform.app`; a sandbox no app holds keeps the label its caller gave it.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "store/migrations.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::MigrateUpTo;
using testing_support::SqliteStoreTest;

TEST_F(SqliteStoreTest, MigrationFortyRelabelsTheReplicasAnAppHolds) {
  const std::string old_path = dir_ + "/v39.db";
  {
    SQLite::Database db(old_path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    MigrateUpTo(db, 40);
    const std::string config =
        R"({"cpu":1,"diskMiB":2048,"image":"debian:12","imageId":null,)"
        R"("labels":{"adapt-app":"app_a","name":"web"},"memoryMiB":1024,)"
        R"("network":{"allow":[],"dns":null,"egress":"open","hostnames":[]},)"
        R"("securityProfile":"restricted","ttlSeconds":3600})";
    for (const char* id : {"sbx_replica", "sbx_callers"})
      db.exec(std::string("INSERT INTO sandboxes(id, org_id, status, config, env, created_at, "
                          "updated_at) VALUES ('") +
              id + "', 'org_old', 'running', '" + config + "', '{}', 1, 1)");
    db.exec(R"(INSERT INTO app_replicas(sandbox_id, app_id, org_id, release_id, state,
                                        created_at)
               VALUES ('sbx_replica', 'app_a', 'org_old', 'rel_a', 'ready', 1))");
  }
  auto opened = OpenSqliteStore(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  auto replica = (*opened)->GetSandbox("org_old", "sbx_replica");
  ASSERT_TRUE(replica.ok()) << replica.status().message();
  EXPECT_EQ(replica->config.labels,
            (std::map<std::string, std::string>{{"name", "web"}, {"platform.app", "app_a"}}));
  auto callers = (*opened)->GetSandbox("org_old", "sbx_callers");
  ASSERT_TRUE(callers.ok()) << callers.status().message();
  EXPECT_EQ(callers->config.labels,
            (std::map<std::string, std::string>{{"adapt-app", "app_a"}, {"name", "web"}}));
}

}  // namespace
}  // namespace adapt::store
