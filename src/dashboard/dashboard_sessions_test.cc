#include "dashboard/dashboard_sessions.h"

#include "dashboard/dashboard_test_support.h"

namespace adapt::dashboard {
namespace {

using DashboardSessionsTest = DashboardFixture;

TEST_F(DashboardSessionsTest, AKeySessionActsForItsOrganizationAndNeverAsAdmin) {
  auto opened = sessions_.SignInWithKey(key_);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_GE(opened->token.size(), 40u);
  auto who = sessions_.Find(opened->token);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->org_id, "org_acme");
  EXPECT_FALSE(who->is_admin);
}

TEST_F(DashboardSessionsTest, AWrongKeyOrPasswordOpensNothing) {
  EXPECT_EQ(sessions_.SignInWithKey("adapt_nope").status().code(), Code::kUnauthenticated);
  EXPECT_EQ(sessions_.SignInWithPassword("ada@example.com", "not the password").status().code(),
            Code::kUnauthenticated);
  EXPECT_EQ(sessions_.SignInWithPassword("eve@example.com", "a long password").status().code(),
            Code::kUnauthenticated);
}

TEST_F(DashboardSessionsTest, APasswordSessionIsTheUsersOrganization) {
  auto opened = sessions_.SignInWithPassword("Ada@Example.com", "a long password");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(sessions_.Find(opened->token)->org_id, "org_acme");
}

TEST_F(DashboardSessionsTest, ASessionExpiresAfterItsLifetime) {
  auto opened = sessions_.SignInWithKey(key_);
  ASSERT_TRUE(opened.ok());
  now_ += DashboardSessions::kLifetimeMillis - 1;
  EXPECT_TRUE(sessions_.Find(opened->token).ok());
  now_ += 1;
  EXPECT_EQ(sessions_.Find(opened->token).status().code(), Code::kUnauthenticated);
}

TEST_F(DashboardSessionsTest, SigningOutEndsOnlyThatSession) {
  auto first = sessions_.SignInWithKey(key_);
  auto second = sessions_.SignInWithKey(key_);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->token, second->token);
  ASSERT_TRUE(sessions_.SignOut(first->token).ok());
  EXPECT_EQ(sessions_.Find(first->token).status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(sessions_.Find(second->token).ok());
}

TEST_F(DashboardSessionsTest, DeletingTheKeyEndsItsSessions) {
  auto opened = sessions_.SignInWithKey(key_);
  ASSERT_TRUE(opened.ok());
  ASSERT_TRUE(store_.DeleteApiKey("org_acme", key_id_).ok());
  EXPECT_EQ(sessions_.Find(opened->token).status().code(), Code::kUnauthenticated);
}

TEST_F(DashboardSessionsTest, ASessionOutlivesItsDashboardSessionsObject) {
  // What adaptd holds in memory goes with a restart; the store keeps the session.
  auto opened = sessions_.SignInWithPassword("ada@example.com", "a long password");
  ASSERT_TRUE(opened.ok());
  DashboardSessions after_restart{store_, auth_, users_, [this] { return now_; }};
  auto who = after_restart.Find(opened->token);
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->org_id, "org_acme");
  EXPECT_EQ(who->key_id.rfind("usr_", 0), 0u);
  EXPECT_FALSE(who->is_admin);
  ASSERT_TRUE(after_restart.SignOut(opened->token).ok());
  EXPECT_EQ(sessions_.Find(opened->token).status().code(), Code::kUnauthenticated);
}

TEST_F(DashboardSessionsTest, AChangedPasswordOrADeletedUserEndsItsSessions) {
  const core::Principal admin{"org_admin", "key_admin", true};
  ASSERT_TRUE(users_.Add(admin, "org_acme", "bob@example.com", "another long password").ok());
  auto ada = sessions_.SignInWithPassword("ada@example.com", "a long password");
  auto bob = sessions_.SignInWithPassword("bob@example.com", "another long password");
  auto key = sessions_.SignInWithKey(key_);
  ASSERT_TRUE(ada.ok() && bob.ok() && key.ok());
  auto ada_id = sessions_.Find(ada->token)->key_id;
  auto bob_id = sessions_.Find(bob->token)->key_id;
  ASSERT_TRUE(store_.SetUserPassword(ada_id, "scrypt$other").ok());
  EXPECT_EQ(sessions_.Find(ada->token).status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(sessions_.Find(bob->token).ok());
  ASSERT_TRUE(store_.DeleteUser(bob_id).ok());
  EXPECT_EQ(sessions_.Find(bob->token).status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(sessions_.Find(key->token).ok());
}

TEST_F(DashboardSessionsTest, AnUnknownOrEmptyTokenIsSignedOut) {
  EXPECT_EQ(sessions_.Find("").status().code(), Code::kUnauthenticated);
  EXPECT_EQ(sessions_.Find("made-up").status().code(), Code::kUnauthenticated);
}

TEST_F(DashboardSessionsTest, AKeySessionEndsWhenItsKeyExpires) {
  const core::Principal acme{"org_acme", "usr_x", false};
  auto key = auth_.CreateOwnKey(acme, {"short", 3600});
  ASSERT_TRUE(key.ok());
  // The session, good for 12 hours, would outlive the key's hour.
  now_ = key->record.created_at;
  auto opened = sessions_.SignInWithKey(key->key);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  now_ = key->record.expires_at - 1;
  EXPECT_TRUE(sessions_.Find(opened->token).ok());
  now_ = key->record.expires_at;
  EXPECT_EQ(sessions_.Find(opened->token).status().code(), Code::kUnauthenticated);
}

}  // namespace
}  // namespace adapt::dashboard
