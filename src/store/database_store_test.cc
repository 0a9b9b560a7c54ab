// DatabaseStore's contract (store/database_store.h), against SQLite and MemoryStore alike.
#include <gtest/gtest.h>

#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

DatabaseRecord Database(const std::string& org_id, const std::string& status) {
  DatabaseRecord d;
  d.org_id = org_id;
  d.name = "adapt_" + org_id;
  d.status = status;
  d.sealed_password = "sealed-" + status;
  d.created_at = d.updated_at = 1000;
  return d;
}

TEST_P(StoreTest, ADatabaseRowRoundTripsKeepsItsCreationTimeAndIsScopedToItsOrganization) {
  EXPECT_EQ(store_->GetDatabase(org_.id).status().code(), Code::kNotFound);
  ASSERT_TRUE(store_->PutDatabase(Database(org_.id, "provisioning")).ok());
  DatabaseRecord ready = Database(org_.id, "ready");
  ready.created_at = ready.updated_at = 2000;
  ASSERT_TRUE(store_->PutDatabase(ready).ok());
  Reopen();
  auto got = store_->GetDatabase(org_.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->name, "adapt_" + org_.id);
  EXPECT_EQ(got->status, "ready");
  EXPECT_EQ(got->sealed_password, "sealed-ready");
  EXPECT_EQ(got->created_at, 1000);
  EXPECT_EQ(got->updated_at, 2000);
  EXPECT_EQ(store_->GetDatabase(other_org_.id).status().code(), Code::kNotFound);
  ASSERT_TRUE(store_->PutDatabase(Database(other_org_.id, "ready")).ok());
  auto all = store_->ListDatabases();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
}

TEST_P(StoreTest, DeletingADatabaseRowRemovesOnlyThatOrganizationsAndTwiceIsNotFound) {
  ASSERT_TRUE(store_->PutDatabase(Database(org_.id, "ready")).ok());
  ASSERT_TRUE(store_->PutDatabase(Database(other_org_.id, "over_quota")).ok());
  ASSERT_TRUE(store_->DeleteDatabase(org_.id).ok());
  EXPECT_EQ(store_->GetDatabase(org_.id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeleteDatabase(org_.id).code(), Code::kNotFound);
  Reopen();
  auto kept = store_->GetDatabase(other_org_.id);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->status, "over_quota");
}

}  // namespace
}  // namespace adapt::store
