// OrgStore's deletion steps (CloseOrg, PurgeOrg), against SQLite and MemoryStore (StoreTest).
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

ApiKeyRecord KeyOf(const std::string& org_id, const std::string& hash) {
  return {NewId("key"), org_id, "k", hash, false, 1000, 0};
}

SecretRecord SecretOf(const std::string& org_id, const std::string& name) {
  SecretRecord s;
  s.org_id = org_id;
  s.name = name;
  s.ciphertext = "sealed";
  s.created_at = s.updated_at = 1000;
  return s;
}

ObjectRecord ObjectOf(const std::string& org_id, const std::string& key) {
  ObjectRecord o;
  o.org_id = org_id;
  o.key = key;
  o.blob = NewId("blob");
  o.size = 1;
  o.created_at = 1000;
  return o;
}

TEST_P(StoreTest, AnOrganizationWithASandboxNotDeletedCannotBeClosed) {
  SandboxRecord s = MustCreate(Sandbox(org_.id, "worker"));
  Status refused = store_->CloseOrg(org_.id, 2000);
  EXPECT_EQ(refused.code(), Code::kConflict);
  EXPECT_NE(refused.message().find("1 sandbox"), std::string::npos) << refused.message();
  // Completed sandboxes keep their disks until deleted: still refused.
  s.status = "completed";
  ASSERT_TRUE(store_->UpdateSandbox(s, {"provisioning"}).ok());
  EXPECT_EQ(store_->CloseOrg(org_.id, 2000).code(), Code::kConflict);
  auto org = store_->GetOrg(org_.id);
  ASSERT_TRUE(org.ok());
  EXPECT_EQ(org->deleting_at, 0);

  s.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(s, {"completed"}).ok());
  EXPECT_TRUE(store_->CloseOrg(org_.id, 2000).ok());
}

TEST_P(StoreTest, TheAdminOrganizationAndAnUnknownOneCannotBeClosed) {
  auto admin = store_->CreateOrg({NewId("org"), "admin", true, 1000});
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(store_->CloseOrg(admin->id, 2000).code(), Code::kConflict);
  EXPECT_EQ(store_->CloseOrg("org_missing", 2000).code(), Code::kNotFound);
  EXPECT_EQ(store_->PurgeOrg(org_.id).code(), Code::kNotFound);  // not being deleted
}

TEST_P(StoreTest, AClosedOrganizationHasNoKeysAndTakesNoNewSandboxKeyOrUser) {
  ASSERT_TRUE(store_->CreateApiKey(KeyOf(org_.id, "hash-mine")).ok());
  ASSERT_TRUE(store_->CreateApiKey(KeyOf(other_org_.id, "hash-other")).ok());
  ASSERT_TRUE(store_->CloseOrg(org_.id, 2000).ok());

  EXPECT_EQ(store_->FindApiKey("hash-mine").status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->FindApiKey("hash-other").ok());
  EXPECT_EQ(store_->CreateSandbox(Sandbox(org_.id, "late"), std::nullopt).status().code(),
            Code::kConflict);
  EXPECT_EQ(store_->CreateApiKey(KeyOf(org_.id, "hash-late")).code(), Code::kConflict);
  EXPECT_EQ(store_->CreateUser({NewId("usr"), org_.id, "late@example.com", "h", 3000}).code(),
            Code::kConflict);
  auto org = store_->GetOrg(org_.id);
  ASSERT_TRUE(org.ok());
  EXPECT_EQ(org->deleting_at, 2000);
  // A second close (a repeated delete) keeps the first time.
  ASSERT_TRUE(store_->CloseOrg(org_.id, 5000).ok());
  EXPECT_EQ(store_->GetOrg(org_.id)->deleting_at, 2000);
  // The other organization still takes them.
  EXPECT_TRUE(store_->CreateSandbox(Sandbox(other_org_.id, "fine"), std::nullopt).ok());
}

// A create authenticated before the close may commit after its kind's deletion step: a new
// volume, database or object of a closed organization is refused in its insert's transaction
// (each would leave a file, a database or a blob that no row names once the rows go); a
// change to one it has goes on (the deletion itself marks its volumes).
TEST_P(StoreTest, AClosedOrganizationTakesNoNewVolumeDatabaseOrObject) {
  VolumeRecord vol{NewId("vol"), org_.id, "data", 64, "ready", "", 1000, 0};
  ASSERT_TRUE(store_->PutVolume(vol, std::nullopt).ok());
  DatabaseRecord db{org_.id, "db_a", "ready", "sealed", 1000, 1000};
  ASSERT_TRUE(store_->PutDatabase(db).ok());
  ASSERT_TRUE(store_->CloseOrg(org_.id, 2000).ok());

  VolumeRecord late{NewId("vol"), org_.id, "late", 64, "creating", "", 3000, 0};
  EXPECT_EQ(store_->PutVolume(late, std::nullopt).code(), Code::kConflict);
  EXPECT_EQ(store_->GetVolumeByName(org_.id, "late").status().code(), Code::kNotFound);
  vol.status = "deleting";
  EXPECT_TRUE(store_->PutVolume(vol, std::nullopt).ok());
  EXPECT_EQ(store_->PutObject(ObjectOf(org_.id, "late.txt")).status().code(), Code::kConflict);
  EXPECT_EQ(store_->GetObject(org_.id, "late.txt").status().code(), Code::kNotFound);
  db.status = "over_quota";
  EXPECT_TRUE(store_->PutDatabase(db).ok());
  // Another organization, closed or not, is its own.
  EXPECT_TRUE(store_->PutObject(ObjectOf(other_org_.id, "fine.txt")).ok());
  EXPECT_TRUE(store_->PutDatabase({other_org_.id, "db_b", "ready", "sealed", 1000, 1000}).ok());
}

TEST_P(StoreTest, PurgingRemovesEveryRowOfTheOrganizationAndNothingOfAnother) {
  SandboxRecord s = MustCreate(Sandbox(org_.id, "worker"));
  SandboxRecord theirs = MustCreate(Sandbox(other_org_.id, "theirs"));
  s.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(s, {"provisioning"}).ok());
  for (const auto& org : {org_.id, other_org_.id}) {
    ASSERT_TRUE(store_->PutSecret(SecretOf(org, "TOKEN")).ok());
    ASSERT_TRUE(store_->PutObject(ObjectOf(org, "a.txt")).ok());
  }
  ASSERT_TRUE(store_->CloseOrg(org_.id, 2000).ok());
  Reopen();  // the mark survives a restart
  auto orgs = store_->ListOrgs();
  ASSERT_TRUE(orgs.ok());
  ASSERT_EQ(orgs->size(), 2u);
  ASSERT_TRUE(store_->PurgeOrg(org_.id).ok());

  EXPECT_EQ(store_->GetOrg(org_.id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetSandbox(org_.id, s.id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetSecret(org_.id, "TOKEN").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetObject(org_.id, "a.txt").status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->GetSandbox(other_org_.id, theirs.id).ok());
  EXPECT_TRUE(store_->GetSecret(other_org_.id, "TOKEN").ok());
  EXPECT_TRUE(store_->GetObject(other_org_.id, "a.txt").ok());
  // Its name is free again.
  EXPECT_TRUE(store_->CreateOrg({NewId("org"), "acme", false, 3000}).ok());
  EXPECT_EQ(store_->PurgeOrg(org_.id).code(), Code::kNotFound);
}

}  // namespace
}  // namespace adapt::store
