// DashboardSessionStore's contract, against SQLite and MemoryStore (StoreTest).
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

DashboardSessionRecord Session(const std::string& hash, const std::string& org_id,
                               const std::string& key_id, int64_t at = 1000) {
  return {hash, org_id, key_id, at, at + 5000, 0};
}

class DashboardSessions : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    ASSERT_TRUE(store_->CreateApiKey({"key_a", org_.id, "a", Sha256Hex("a"), false, 1000}).ok());
    ASSERT_TRUE(store_->CreateUser({"usr_ada", org_.id, "ada@example.com", "h1", 1000}).ok());
    ASSERT_TRUE(store_->CreateUser({"usr_bob", org_.id, "bob@example.com", "h2", 1000}).ok());
  }
};

TEST_P(DashboardSessions, ASessionIsFoundUntilItExpiresAndOutlivesAReopen) {
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_a", org_.id, "key_a"), 10).ok());
  Reopen();  // SQLite: a restarted adaptd finds it
  auto found = store_->FindDashboardSession("h_a", 5999);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->org_id, org_.id);
  EXPECT_EQ(found->key_id, "key_a");
  EXPECT_EQ(found->created_at, 1000);
  EXPECT_EQ(found->expires_at, 6000);
  EXPECT_EQ(store_->FindDashboardSession("h_a", 6000).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->FindDashboardSession("h_other", 2000).status().code(), Code::kNotFound);
}

TEST_P(DashboardSessions, ARevokedSessionIsNotFoundAndOthersStay) {
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_1", org_.id, "usr_ada"), 100).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_2", org_.id, "usr_ada"), 100).ok());
  ASSERT_TRUE(store_->RevokeDashboardSession("h_1", 2000).ok());
  ASSERT_TRUE(store_->RevokeDashboardSession("h_1", 3000).ok());  // again: nothing
  ASSERT_TRUE(store_->RevokeDashboardSession("h_unknown", 3000).ok());
  EXPECT_EQ(store_->FindDashboardSession("h_1", 2500).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->FindDashboardSession("h_2", 2500).ok());
}

TEST_P(DashboardSessions, DeletingTheKeyOrUserOrChangingThePasswordEndsItsSessions) {
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_key", org_.id, "key_a"), 100).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_ada", org_.id, "usr_ada"), 100).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_bob", org_.id, "usr_bob"), 100).ok());
  ASSERT_TRUE(store_->SetUserPassword("usr_ada", "h3").ok());
  EXPECT_FALSE(store_->FindDashboardSession("h_ada", 2000).ok());
  EXPECT_TRUE(store_->FindDashboardSession("h_bob", 2000).ok());
  ASSERT_TRUE(store_->DeleteApiKey(org_.id, "key_a").ok());
  EXPECT_FALSE(store_->FindDashboardSession("h_key", 2000).ok());
  ASSERT_TRUE(store_->DeleteUser("usr_bob").ok());
  EXPECT_FALSE(store_->FindDashboardSession("h_bob", 2000).ok());
  // A session for a key or user that is gone is refused.
  EXPECT_EQ(store_->CreateDashboardSession(Session("h_new", org_.id, "usr_bob"), 10).code(),
            Code::kNotFound);
}

// Room is made, never refused: one tenant signing in in a loop once filled the table and
// locked every organization's users out for the sessions' 12 hours.
TEST_P(DashboardSessions, AnOrganizationAtItsShareGivesUpItsOldestSession) {
  // 20 in all: 2 (a tenth) per organization.
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_1", org_.id, "key_a", 1000), 20).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_2", org_.id, "key_a", 1100), 20).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_3", org_.id, "usr_ada", 1200), 20).ok());
  EXPECT_FALSE(store_->FindDashboardSession("h_1", 1300).ok());
  EXPECT_TRUE(store_->FindDashboardSession("h_2", 1300).ok());
  EXPECT_TRUE(store_->FindDashboardSession("h_3", 1300).ok());
  // Expired and revoked ones go first: h_2 and h_3 expire at 6100 and 6200.
  ASSERT_TRUE(store_->RevokeDashboardSession("h_3", 1400).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_4", org_.id, "key_a", 1500), 20).ok());
  EXPECT_TRUE(store_->FindDashboardSession("h_2", 1600).ok());
  EXPECT_TRUE(store_->FindDashboardSession("h_4", 1600).ok());
}

TEST_P(DashboardSessions, AFullTableTakesFromTheOrganizationHoldingTheMost) {
  // 3 in all, 1 per organization: four organizations with a session each cannot all fit.
  std::vector<std::string> orgs = {org_.id};
  for (const char* name : {"b", "c", "d"}) {
    auto org = store_->CreateOrg({NewId("org"), name, false, 1000});
    ASSERT_TRUE(org.ok());
    orgs.push_back(org->id);
    ASSERT_TRUE(store_
                    ->CreateApiKey(
                        {std::string("key_") + name, org->id, name, Sha256Hex(name), false, 1000})
                    .ok());
  }
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_a", orgs[0], "key_a", 1000), 3).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_b", orgs[1], "key_b", 1100), 3).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_c", orgs[2], "key_c", 1200), 3).ok());
  ASSERT_TRUE(store_->CreateDashboardSession(Session("h_d", orgs[3], "key_d", 1300), 3).ok());
  int open = 0;
  for (const char* h : {"h_a", "h_b", "h_c", "h_d"})
    open += store_->FindDashboardSession(h, 1400).ok() ? 1 : 0;
  EXPECT_EQ(open, 3);
  EXPECT_TRUE(store_->FindDashboardSession("h_d", 1400).ok());  // the newest got in
}

INSTANTIATE_TEST_SUITE_P(Backends, DashboardSessions,
                         testing::Values(testing_support::Backend::kSqlite,
                                         testing_support::Backend::kMemory),
                         testing_support::BackendName);

}  // namespace
}  // namespace adapt::store
