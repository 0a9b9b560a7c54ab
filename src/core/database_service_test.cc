// DatabaseService without a server (its SQL runs against the real one in
// tests/e2e/test_database.py): the views it gives, and DatabaseName's rule.
#include "core/database_service.h"

#include <gtest/gtest.h>

#include "core/database_access.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

TEST(DatabaseServiceTest, WithoutAServerEveryDatabaseIsUnavailableAndCreatingFailsClearly) {
  store::MemoryStore store;
  DatabaseService service(store, nullptr, std::string(64, 'k'));
  Principal who{"org_abc", "key_1"};
  auto view = service.Describe(who);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->status, "unavailable");
  EXPECT_GT(view->quota_bytes, 0);
  auto created = service.Create(who);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), Code::kUnavailable);
  // The attempt is recorded (provisioning, its password sealed), so a later one finishes it.
  auto record = store.GetDatabase("org_abc");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->status, "provisioning");
  EXPECT_EQ(record->name, "adapt_org_abc");
  EXPECT_FALSE(record->sealed_password.empty());
}

TEST(DatabaseServiceTest, DeletingNeedsTheOrganizationsExactIdAndDumpingNeedsADatabase) {
  store::MemoryStore store;
  DatabaseService service(store, nullptr, std::string(64, 'k'));
  Principal who{"org_abc", "key_1"};
  EXPECT_EQ(service.Delete(who, "org_abc").code(), Code::kNotFound);
  ASSERT_FALSE(service.Create(who).ok());  // recorded as provisioning
  for (const char* wrong : {"", "ORG_ABC", "org_abc ", "org_other"}) {
    Status st = service.Delete(who, wrong);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << wrong;
    EXPECT_EQ(st.field(), "confirm");
  }
  EXPECT_TRUE(store.GetDatabase("org_abc").ok()) << "a refused delete removed the row";
  EXPECT_EQ(service.Delete(who, "org_abc").code(), Code::kUnavailable);  // no server here
  EXPECT_EQ(service.Dump(who).status().code(), Code::kUnavailable);
  EXPECT_EQ(service.Delete(Principal{"org_none", "key_2"}, "org_none").code(), Code::kNotFound);
}

TEST(DatabaseServiceTest, ThePlansLimitsReplaceTheDefaults) {
  store::MemoryStore store;
  DatabaseService service(store, nullptr, std::string(64, 'k'));
  service.set_limits([&](const std::string& org_id) {
    DatabaseLimits l = service.defaults();
    if (org_id == "org_big") l.quota_bytes = 5LL << 30;
    return l;
  });
  EXPECT_EQ(service.Describe(Principal{"org_big", "k"})->quota_bytes, 5LL << 30);
  EXPECT_EQ(service.Describe(Principal{"org_small", "k"})->quota_bytes, 1LL << 30);
}

TEST(DatabaseServiceTest, NamesArePlainPostgresIdentifiersWhateverTheOrganizationId) {
  EXPECT_EQ(DatabaseName("org_x2"), "adapt_org_x2");
  std::string odd = DatabaseName("Org\"; DROP");
  EXPECT_EQ(odd.rfind("adapt_", 0), 0u);
  EXPECT_EQ(odd.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos);
  EXPECT_LE(DatabaseName(std::string(200, 'a')).size(), 63u);
}

TEST(DatabaseServiceTest, TheEnvironmentPointsAtTheGatewayAndCarriesTheCredentials) {
  auto env = DatabaseEnvironment({"adapt_org_a", "pw-123_x", 5433}, "10.88.0.1");
  EXPECT_EQ(env.at("DATABASE_URL"),
            "postgresql://adapt_org_a:pw-123_x@10.88.0.1:5433/adapt_org_a?sslmode=disable");
  EXPECT_EQ(env.at("PGHOST"), "10.88.0.1");
  EXPECT_EQ(env.at("PGPORT"), "5433");
  EXPECT_EQ(env.at("PGUSER"), "adapt_org_a");
  EXPECT_EQ(env.at("PGDATABASE"), "adapt_org_a");
  EXPECT_EQ(env.at("PGPASSWORD"), "pw-123_x");
}

TEST(DatabaseOrgForAddress, OnlyARunningDatabaseSandboxAtItsPoolAddressGetsItsOrganization) {
  store::MemoryStore store;
  auto org = store.CreateOrg({"org_abc", "acme", false, 1000});
  ASSERT_TRUE(org.ok()) << org.status().message();
  auto pool = net::AddressPool::Parse("10.88.0.0/16");
  ASSERT_TRUE(pool.ok());
  auto add = [&](const std::string& id, int64_t slot, const std::string& status, bool database) {
    store::SandboxRecord r;
    r.id = id;
    r.org_id = "org_abc";
    r.status = status;
    r.config.database = database;
    r.config.network.egress = "open";
    ASSERT_TRUE(store.CreateSandbox(r, std::nullopt).ok());
    store::NetworkRecord n;
    n.sandbox_id = id;
    n.slot = slot;
    n.address = pool->SandboxAddress(slot);
    n.host_address = pool->HostAddress(slot);
    ASSERT_TRUE(store.PutNetwork(n).ok());
  };
  add("sbx_db", 5, "running", true);
  add("sbx_plain", 6, "running", false);
  add("sbx_stopped", 7, "stopped", true);
  if (testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(DatabaseOrgForAddress(store, store, *pool, pool->SandboxAddress(5)), "org_abc");
  EXPECT_EQ(DatabaseOrgForAddress(store, store, *pool, pool->HostAddress(5)), std::nullopt);
  EXPECT_EQ(DatabaseOrgForAddress(store, store, *pool, pool->SandboxAddress(6)), std::nullopt);
  EXPECT_EQ(DatabaseOrgForAddress(store, store, *pool, pool->SandboxAddress(7)), std::nullopt);
  EXPECT_EQ(DatabaseOrgForAddress(store, store, *pool, pool->SandboxAddress(8)), std::nullopt);
  EXPECT_EQ(DatabaseOrgForAddress(store, store, *pool, "192.0.2.6"), std::nullopt);
}

}  // namespace
}  // namespace adapt::core
