// DatabaseService::Reconcile against Debian's real postgresql-15 (root: the server runs as the
// `postgres` OS user): a database a crash left provisioning is finished at start-up, without
// its organization calling again.
#include <gtest/gtest.h>

#include "core/database_service.h"
#include "database/pg_session.h"
#include "database/postgres_server.h"
#include "os/temp_dir.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

TEST(DatabaseReconcileTest, ADatabaseACrashLeftProvisioningIsFinishedAtStartUp) {
  os::TempDir tmp("db-reconcile-test");
  store::MemoryStore store;
  const std::string key(64, 'k');
  Principal cut{"org_cut", "key_1"};
  {
    // As a crash after the row and before the SQL: recorded, sealed password, nothing made.
    DatabaseService before(store, nullptr, key);
    ASSERT_FALSE(before.Create(cut).ok());
    ASSERT_EQ(store.GetDatabase("org_cut")->status, "provisioning");
  }
  database::PostgresOptions options;
  options.root = tmp.path() + "/postgres";
  database::PostgresServer server(options);
  DatabaseService service(store, &server, key);
  service.Reconcile();

  auto record = store.GetDatabase("org_cut");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, "ready");
  auto view = service.Describe(cut);
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_EQ(view->status, "ready");
  // Made with the password sealed before the crash: the sandboxes' credentials work.
  auto credentials = service.Credentials("org_cut");
  ASSERT_TRUE(credentials.ok()) << credentials.status().message();
  {
    auto session = database::PgSession::Open(
        "host=" + server.SocketDir() + " port=" + std::to_string(server.port()) +
        " user=" + credentials->name + " dbname=" + credentials->name +
        " password=" + credentials->password + " connect_timeout=10");
    EXPECT_TRUE(session.ok()) << session.status().message();
  }
  ASSERT_TRUE(server.Stop().ok());
}

TEST(DatabaseReconcileTest, WithoutAServerAProvisioningDatabaseStaysAsItIs) {
  store::MemoryStore store;
  DatabaseService service(store, nullptr, std::string(64, 'k'));
  ASSERT_FALSE(service.Create(Principal{"org_a", "key_1"}).ok());
  service.Reconcile();
  EXPECT_EQ(store.GetDatabase("org_a")->status, "provisioning");
}

}  // namespace
}  // namespace adapt::core
