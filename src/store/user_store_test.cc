// UserStore's contract, against SQLite and MemoryStore (StoreTest).
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

UserRecord User(const std::string& org_id, const std::string& email, int64_t at) {
  return {NewId("usr"), org_id, email, "scrypt$hash", at};
}

TEST_P(StoreTest, UsersAreFoundByEmailAndAnEmailBelongsToOneUserAcrossOrganizations) {
  UserRecord ada = User(org_.id, "ada@example.com", 2000);
  ASSERT_TRUE(store_->CreateUser(ada).ok());
  auto found = store_->FindUserByEmail("ada@example.com");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->id, ada.id);
  EXPECT_EQ(found->org_id, org_.id);
  EXPECT_EQ(found->password_hash, "scrypt$hash");
  EXPECT_EQ(found->created_at, 2000);

  Status again = store_->CreateUser(User(other_org_.id, "ada@example.com", 3000));
  EXPECT_EQ(again.code(), Code::kConflict);
  EXPECT_EQ(store_->FindUserByEmail("bob@example.com").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->CreateUser(User("org_missing", "bob@example.com", 3000)).code(),
            Code::kNotFound);
}

// In the order they were added (their insertion sequence, which the list pages on), whatever
// their creation times say.
TEST_P(StoreTest, UsersAreListedPerOrganizationInInsertOrderOrAllTogether) {
  ASSERT_TRUE(store_->CreateUser(User(org_.id, "late@example.com", 3000)).ok());
  ASSERT_TRUE(store_->CreateUser(User(org_.id, "early@example.com", 1000)).ok());
  ASSERT_TRUE(store_->CreateUser(User(other_org_.id, "other@example.com", 2000)).ok());
  auto mine = store_->ListUsers(org_.id);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ((*mine)[0].email, "late@example.com");
  EXPECT_EQ((*mine)[1].email, "early@example.com");
  EXPECT_LT((*mine)[0].seq, (*mine)[1].seq);
  auto all = store_->ListUsers("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
}

OAuthGrantRecord GrantOf(const UserRecord& user, const std::string& hash) {
  OAuthGrantRecord g;
  g.hash = hash;
  g.kind = "access";
  g.client_id = "client-1";
  g.org_id = user.org_id;
  g.key_id = user.id;
  g.expires_at = 1LL << 50;
  g.created_at = 1000;
  return g;
}

TEST_P(StoreTest, DeletingAUserRevokesItsGrantsButNeverTheOrganizationsLastUser) {
  UserRecord ada = User(org_.id, "ada@example.com", 1000);
  UserRecord bob = User(org_.id, "bob@example.com", 2000);
  ASSERT_TRUE(store_->CreateUser(ada).ok());
  ASSERT_TRUE(store_->CreateUser(bob).ok());
  ASSERT_TRUE(store_->CreateOAuthClient({"client-1", "a", {"https://a/cb"}, 1000}).ok());
  ASSERT_TRUE(store_->PutOAuthGrant(GrantOf(ada, "hash-ada")).ok());
  ASSERT_TRUE(store_->PutOAuthGrant(GrantOf(bob, "hash-bob")).ok());
  auto deleted = store_->DeleteUser(ada.id);
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  EXPECT_EQ(deleted->email, "ada@example.com");
  EXPECT_EQ(store_->GetUser(ada.id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->FindOAuthGrant("hash-ada", "access", 2000).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->FindOAuthGrant("hash-bob", "access", 2000).ok());
  Status last = store_->DeleteUser(bob.id).status();
  EXPECT_EQ(last.code(), Code::kConflict);
  EXPECT_NE(last.message().find("last user"), std::string::npos);
  EXPECT_TRUE(store_->GetUser(bob.id).ok());
  EXPECT_EQ(store_->DeleteUser(ada.id).status().code(), Code::kNotFound);
}

TEST_P(StoreTest, ChangingAPasswordReplacesTheHashAndRevokesTheUsersGrants) {
  UserRecord ada = User(org_.id, "ada@example.com", 1000);
  ASSERT_TRUE(store_->CreateUser(ada).ok());
  ASSERT_TRUE(store_->CreateOAuthClient({"client-1", "a", {"https://a/cb"}, 1000}).ok());
  ASSERT_TRUE(store_->PutOAuthGrant(GrantOf(ada, "hash-ada")).ok());
  ASSERT_TRUE(store_->SetUserPassword(ada.id, "scrypt$new").ok());
  EXPECT_EQ(store_->GetUser(ada.id)->password_hash, "scrypt$new");
  EXPECT_EQ(store_->FindOAuthGrant("hash-ada", "access", 2000).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->SetUserPassword("usr_missing", "scrypt$x").code(), Code::kNotFound);
}

TEST_P(StoreTest, SignUpMakesTheOrganizationAndItsUserTogetherOrNeither) {
  ASSERT_TRUE(store_->CreateUser(User(org_.id, "taken@example.com", 1000)).ok());
  OrgRecord fresh{NewId("org"), "fresh", false, 2000, false};
  Status refused = store_->CreateOrgWithUser(fresh, User(fresh.id, "taken@example.com", 2000));
  EXPECT_EQ(refused.code(), Code::kConflict);
  EXPECT_EQ(store_->GetOrg(fresh.id).status().code(), Code::kNotFound);

  UserRecord first = User(fresh.id, "first@example.com", 2000);
  ASSERT_TRUE(store_->CreateOrgWithUser(fresh, first).ok());
  auto org = store_->GetOrg(fresh.id);
  ASSERT_TRUE(org.ok());
  EXPECT_FALSE(org->registered);
  EXPECT_EQ(store_->FindUserByEmail("first@example.com")->org_id, fresh.id);

  OrgRecord same_name{NewId("org"), "fresh", false, 3000, false};
  EXPECT_EQ(
      store_->CreateOrgWithUser(same_name, User(same_name.id, "new@example.com", 3000)).code(),
      Code::kConflict);
  EXPECT_EQ(store_->FindUserByEmail("new@example.com").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace adapt::store
