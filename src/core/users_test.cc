#include "core/users.h"

#include <gtest/gtest.h>

#include "store/memory_store.h"

namespace adapt::core {
namespace {

const Principal kAdmin{"org_admin", "key_admin", true};

class UsersTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.CreateOrg({"org_acme", "acme", false, 1}).ok());
    ASSERT_TRUE(store_.CreateOrg({"org_other", "other", false, 1}).ok());
  }
  store::MemoryStore store_;
  Users users_{store_};
};

TEST(NormalizeEmail, TrimsAndLowerCasesAndRefusesWhatIsNotAnAddress) {
  EXPECT_EQ(*NormalizeEmail("  Ada.Lovelace@Example.COM\n"), "ada.lovelace@example.com");
  for (const char* bad : {"", "ada", "ada@", "@example.com", "ada@example", "a b@example.com",
                          "ada@@example.com", "ada@example..com", "ada@example.com."}) {
    auto r = NormalizeEmail(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().field(), "email");
  }
  EXPECT_FALSE(NormalizeEmail(std::string(250, 'a') + "@example.com").ok());
}

TEST_F(UsersTest, OnlyTheAdminAddsAndListsUsers) {
  Principal tenant{"org_acme", "key_1", false};
  EXPECT_EQ(users_.Add(tenant, "org_acme", "a@example.com", "").status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(users_.List(tenant, "org_acme").status().code(), Code::kPermissionDenied);
  EXPECT_EQ(users_.Add(kAdmin, "org_missing", "a@example.com", "").status().code(),
            Code::kNotFound);
  auto added = users_.Add(kAdmin, "org_acme", "A@Example.com", "");
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(added->record.email, "a@example.com");
  EXPECT_GE(added->password.size(), 20u);  // chosen by the server, shown once
  auto listed = users_.List(kAdmin, "");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_NE(listed->items[0].password_hash.find("scrypt$"), std::string::npos);
  EXPECT_FALSE(listed->next_cursor);
  EXPECT_EQ(users_.Add(kAdmin, "org_other", "a@example.com", "").status().code(), Code::kConflict);
  EXPECT_EQ(users_.Add(kAdmin, "org_acme", "b@example.com", "short").status().field(), "password");
}

TEST_F(UsersTest, SignInNeedsTheRightPasswordAndSaysTheSameForAnUnknownEmail) {
  ASSERT_TRUE(users_.Add(kAdmin, "org_acme", "ada@example.com", "a long password").ok());
  auto who = users_.SignIn(" ADA@example.com", "a long password");
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_EQ(who->org_id, "org_acme");
  EXPECT_FALSE(who->is_admin);
  EXPECT_TRUE(who->registered);
  EXPECT_EQ(who->key_id.rfind("usr_", 0), 0u);

  auto wrong = users_.SignIn("ada@example.com", "a long passworD");
  auto unknown = users_.SignIn("bob@example.com", "a long password");
  auto malformed = users_.SignIn("not an email", "a long password");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(unknown.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(malformed.status().code(), Code::kUnauthenticated);
  EXPECT_EQ(wrong.status().message(), unknown.status().message());
  EXPECT_EQ(wrong.status().message(), malformed.status().message());
}

TEST_F(UsersTest, SignUpMakesAnUnregisteredOrganizationWithItsFirstUser) {
  auto who = users_.SignUp("New.Person@example.com", "a long password");
  ASSERT_TRUE(who.ok()) << who.status().message();
  EXPECT_FALSE(who->registered);
  auto org = store_.GetOrg(who->org_id);
  ASSERT_TRUE(org.ok());
  EXPECT_FALSE(org->registered);
  EXPECT_EQ(org->name.rfind("new-person-", 0), 0u) << org->name;
  auto again = users_.SignIn("new.person@example.com", "a long password");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->org_id, who->org_id);
  EXPECT_FALSE(again->registered);

  EXPECT_EQ(users_.SignUp("new.person@example.com", "another password").status().code(),
            Code::kConflict);
  EXPECT_EQ(users_.SignUp("x@example.com", "short").status().field(), "password");
  EXPECT_EQ(store_.ListOrgs()->size(), 3u);  // the fixture's two and the sign-up
}

TEST_F(UsersTest, AUserIsDeletedByTheAdminOrItsOwnOrganizationButNeverTheLastOne) {
  auto ada = users_.Add(kAdmin, "org_acme", "ada@example.com", "");
  auto bob = users_.Add(kAdmin, "org_acme", "bob@example.com", "");
  ASSERT_TRUE(ada.ok() && bob.ok());
  Principal other{"org_other", "key_2", false};
  EXPECT_EQ(users_.Delete(other, ada->record.id).status().code(), Code::kNotFound);
  Principal bob_signed_in{"org_acme", bob->record.id, false};
  ASSERT_TRUE(users_.Delete(bob_signed_in, ada->record.id).ok());
  EXPECT_EQ(users_.SignIn("ada@example.com", ada->password).status().code(),
            Code::kUnauthenticated);
  EXPECT_EQ(users_.Delete(kAdmin, bob->record.id).status().code(), Code::kConflict);
  EXPECT_EQ(users_.Delete(kAdmin, "usr_missing").status().code(), Code::kNotFound);
}

TEST_F(UsersTest, APasswordIsChangedByTheAdminOrByTheUserWithItsCurrentOne) {
  auto ada = users_.Add(kAdmin, "org_acme", "ada@example.com", "");
  auto bob = users_.Add(kAdmin, "org_acme", "bob@example.com", "");
  ASSERT_TRUE(ada.ok() && bob.ok());
  const std::string id = ada->record.id;
  Principal self{"org_acme", id, false};
  Principal colleague{"org_acme", bob->record.id, false};
  Principal other{"org_other", "key_2", false};
  EXPECT_EQ(users_.ChangePassword(other, id, "new-password-1", "").code(), Code::kNotFound);
  EXPECT_EQ(users_.ChangePassword(colleague, id, "new-password-1", ada->password).code(),
            Code::kPermissionDenied);
  EXPECT_EQ(users_.ChangePassword(self, id, "new-password-1", "").field(), "currentPassword");
  EXPECT_EQ(users_.ChangePassword(self, id, "new-password-1", "wrong-password").code(),
            Code::kPermissionDenied);
  EXPECT_EQ(users_.ChangePassword(self, id, "short", ada->password).field(), "password");
  ASSERT_TRUE(users_.ChangePassword(self, id, "new-password-1", ada->password).ok());
  EXPECT_FALSE(users_.SignIn("ada@example.com", ada->password).ok());
  EXPECT_TRUE(users_.SignIn("ada@example.com", "new-password-1").ok());
  ASSERT_TRUE(users_.ChangePassword(kAdmin, id, "new-password-2", "").ok());
  EXPECT_TRUE(users_.SignIn("ada@example.com", "new-password-2").ok());
}

}  // namespace
}  // namespace adapt::core
