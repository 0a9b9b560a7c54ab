// Auth's own-organization key verbs (/v1/keys): create, list, revoke, expiry, and the
// organization boundary.
#include "core/auth.h"

#include <gtest/gtest.h>

#include "base/ids.h"
#include "base/time.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

class OwnKeysTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.CreateOrg({"org_a", "a", false, 1}).ok());
    ASSERT_TRUE(store_.CreateOrg({"org_b", "b", false, 1}).ok());
  }

  store::MemoryStore store_;
  Auth auth_{store_};
  // A user of each organization (a dashboard session or an OAuth grant).
  Principal a_{"org_a", "usr_a", false};
  Principal b_{"org_b", "usr_b", false};
};

TEST_F(OwnKeysTest, CreatedKeyAuthenticatesAndListsWithoutItsText) {
  auto key = auth_.CreateOwnKey(a_, {"ci", std::nullopt});
  ASSERT_TRUE(key.ok()) << key.status().message();
  EXPECT_EQ(key->record.org_id, "org_a");
  EXPECT_EQ(key->record.name, "ci");
  EXPECT_EQ(key->record.expires_at, 0);
  EXPECT_FALSE(key->record.is_admin);
  auto who = auth_.Authenticate(key->key);
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->org_id, "org_a");
  EXPECT_FALSE(who->is_admin);
  auto listed = auth_.ListOwnKeys(a_);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].id, key->record.id);
  EXPECT_NE(listed->items[0].key_hash, key->key);
  EXPECT_TRUE(auth_.ListOwnKeys(b_)->items.empty());
}

TEST_F(OwnKeysTest, AnotherOrganizationsKeyIsNotFoundAndKeepsWorking) {
  auto key = auth_.CreateOwnKey(a_, {"", std::nullopt});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->record.name, "key");
  EXPECT_EQ(auth_.RevokeOwnKey(b_, key->record.id).code(), Code::kNotFound);
  EXPECT_TRUE(auth_.Authenticate(key->key).ok());
  ASSERT_TRUE(auth_.RevokeOwnKey(a_, key->record.id).ok());
  EXPECT_EQ(auth_.Authenticate(key->key).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(auth_.RevokeOwnKey(a_, key->record.id).code(), Code::kNotFound);
}

TEST_F(OwnKeysTest, ExpiredKeyIsRefused) {
  auto key = auth_.CreateOwnKey(a_, {"short", 3600});
  ASSERT_TRUE(key.ok());
  EXPECT_GT(key->record.expires_at, key->record.created_at);
  EXPECT_TRUE(auth_.Authenticate(key->key).ok());
  // One that expired a second ago, written as the store would hold it.
  store::ApiKeyRecord old{NewId("key"),      "org_a", "old", Sha256Hex("adapt_old"), false, 1,
                          NowMillis() - 1000};
  ASSERT_TRUE(store_.CreateApiKey(old).ok());
  auto refused = auth_.Authenticate("adapt_old");
  EXPECT_EQ(refused.status().code(), Code::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("expired"), std::string::npos);
}

TEST_F(OwnKeysTest, BadInputIsRefused) {
  EXPECT_EQ(auth_.CreateOwnKey(a_, {"x", 0}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(auth_.CreateOwnKey(a_, {"x", -5}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(auth_.CreateOwnKey(a_, {"x", kMaxKeyTtlSeconds + 1}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(auth_.CreateOwnKey(a_, {std::string(64, 'n'), std::nullopt}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(auth_.CreateOwnKey(a_, {"tab\there", std::nullopt}).status().code(),
            Code::kInvalidArgument);
  EXPECT_TRUE(auth_.ListOwnKeys(a_)->items.empty());
}

TEST_F(OwnKeysTest, KeysAreListedNewestFirstAPageAtATime) {
  std::vector<std::string> made;
  for (const char* name : {"first", "second", "third"}) {
    auto key = auth_.CreateOwnKey(a_, {name, std::nullopt});
    ASSERT_TRUE(key.ok());
    made.push_back(key->record.id);
  }
  auto first = auth_.ListOwnKeys(a_, {2, ""});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].id, made[2]);
  EXPECT_EQ(first->items[1].id, made[1]);
  ASSERT_TRUE(first->next_cursor);
  ASSERT_TRUE(auth_.CreateOwnKey(a_, {"between", std::nullopt}).ok());
  auto second = auth_.ListOwnKeys(a_, {2, *first->next_cursor});
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].id, made[0]);
  EXPECT_FALSE(second->next_cursor);
  EXPECT_EQ(auth_.ListOwnKeys(a_, {201, ""}).status().field(), "limit");
  EXPECT_EQ(auth_.ListOwnKeys(a_, {2, "k00"}).status().field(), "cursor");
}

TEST_F(OwnKeysTest, AtMostKMaxKeysPerOrg) {
  for (size_t i = 0; i < kMaxKeysPerOrg; ++i)
    ASSERT_TRUE(auth_.CreateOwnKey(a_, {"k", std::nullopt}).ok());
  EXPECT_EQ(auth_.CreateOwnKey(a_, {"k", std::nullopt}).status().code(), Code::kResourceExhausted);
  EXPECT_TRUE(auth_.CreateOwnKey(b_, {"k", std::nullopt}).ok());
}

TEST_F(OwnKeysTest, TheAdminKeyCannotBeRevoked) {
  ASSERT_TRUE(auth_.Bootstrap(testing::TempDir() + "/own_keys_admin.key").ok());
  auto admin_org = store_.FindOrgByName("admin");
  ASSERT_TRUE(admin_org.ok());
  Principal admin_user{admin_org->id, "usr_x", false};
  auto keys = auth_.ListOwnKeys(admin_user);
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->items.size(), 1u);
  EXPECT_EQ(auth_.RevokeOwnKey(admin_user, keys->items[0].id).code(), Code::kConflict);
}

}  // namespace
}  // namespace adapt::core
