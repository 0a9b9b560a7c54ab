// IdempotencyStore against both backends: a key replays the object it made, a different
// request is a Conflict, and keys are apart per organization and per scope.
#include <gtest/gtest.h>

#include <string>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::Backend;
using testing_support::StoreTestBase;

class IdempotencyStoreTest : public StoreTestBase, public testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    backend_ = GetParam();
    StoreTestBase::SetUp();
  }

  IdempotencyClaim Claim(const std::string& org_id, const std::string& scope,
                         const std::string& key, const std::string& body) {
    return IdempotencyClaim{org_id, scope, IdempotencyKey{key, Sha256Hex(body)}, 5000};
  }

  // Stores a token under `claim`; the id the store answers and whether it replayed.
  Result<IdempotentCreate> CreateToken(const IdempotencyClaim& claim) {
    StorageTokenRecord t;
    t.id = NewId("stk");
    t.org_id = claim.org_id;
    t.name = "t";
    t.created_at = 5000;
    t.expires_at = 9000;
    return store_->CreateOnce(claim, [&]() -> Result<std::string> {
      RETURN_IF_ERROR(store_->PutStorageToken(t));
      return t.id;
    });
  }

  size_t TokenCount(const std::string& org_id) {
    auto all = store_->ListStorageTokens(org_id);
    EXPECT_TRUE(all.ok()) << all.status().message();
    return all.ok() ? all->size() : 0;
  }
};

TEST_P(IdempotencyStoreTest, TheSameKeyAndBodyReplaysTheFirstObjectAndWritesNothing) {
  auto first = CreateToken(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_FALSE(first->replayed);
  auto again = CreateToken(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->object_id, first->object_id);
  EXPECT_EQ(TokenCount(org_.id), 1u);
  auto found = store_->FindIdempotentCreate(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->value_or(""), first->object_id);
}

TEST_P(IdempotencyStoreTest, TheSameKeyWithAnotherBodyIsAConflictNamingTheHeader) {
  ASSERT_TRUE(CreateToken(Claim(org_.id, "storage_token", "k1", "body-a")).ok());
  auto other = CreateToken(Claim(org_.id, "storage_token", "k1", "body-b"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kConflict);
  EXPECT_EQ(other.status().field(), "Idempotency-Key");
  auto found = store_->FindIdempotentCreate(Claim(org_.id, "storage_token", "k1", "body-b"));
  EXPECT_EQ(found.status().code(), Code::kConflict);
  EXPECT_EQ(TokenCount(org_.id), 1u);
}

TEST_P(IdempotencyStoreTest, AnotherOrganizationsSameKeyMakesItsOwnObject) {
  auto mine = CreateToken(Claim(org_.id, "storage_token", "shared", "body"));
  auto theirs = CreateToken(Claim(other_org_.id, "storage_token", "shared", "other body"));
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(theirs.ok()) << theirs.status().message();
  EXPECT_FALSE(theirs->replayed);
  EXPECT_NE(theirs->object_id, mine->object_id);
  EXPECT_EQ(TokenCount(other_org_.id), 1u);
}

TEST_P(IdempotencyStoreTest, KeysOfDifferentScopesAreApart) {
  ASSERT_TRUE(CreateToken(Claim(org_.id, "storage_token", "k1", "body")).ok());
  auto secret_scope = store_->FindIdempotentCreate(Claim(org_.id, "secret", "k1", "other"));
  ASSERT_TRUE(secret_scope.ok()) << secret_scope.status().message();
  EXPECT_FALSE(secret_scope->has_value());
}

TEST_P(IdempotencyStoreTest, AFailedInsertRecordsNoKeySoARetryCreates) {
  auto failed = store_->CreateOnce(Claim(org_.id, "storage_token", "k1", "body"),
                                   []() -> Result<std::string> { return Conflict("refused"); });
  EXPECT_EQ(failed.status().code(), Code::kConflict);
  auto found = store_->FindIdempotentCreate(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  auto retry = CreateToken(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(retry.ok()) << retry.status().message();
  EXPECT_FALSE(retry->replayed);
}

TEST_P(IdempotencyStoreTest, PurgedKeysOfEveryScopeNoLongerReplay) {
  ASSERT_TRUE(CreateToken(Claim(org_.id, "storage_token", "k1", "body")).ok());
  ASSERT_TRUE(store_->PurgeIdempotencyKeys(6000).ok());
  auto again = CreateToken(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->replayed);
  EXPECT_EQ(TokenCount(org_.id), 2u);
}

// SQLite: the object's row and the key are one transaction, so the object written by the
// insert is undone when recording the key fails, and a failure after the object's own
// method committed its part still leaves neither.
TEST_P(IdempotencyStoreTest, AnInsertThatFailsAfterWritingLeavesNeitherObjectNorKey) {
  auto failed = store_->CreateOnce(Claim(org_.id, "storage_token", "k1", "body"),
                                   [&]() -> Result<std::string> {
                                     StorageTokenRecord t;
                                     t.id = NewId("stk");
                                     t.org_id = org_.id;
                                     t.created_at = 5000;
                                     t.expires_at = 9000;
                                     RETURN_IF_ERROR(store_->PutStorageToken(t));
                                     return Internal("failed after the row was written");
                                   });
  EXPECT_EQ(failed.status().code(), Code::kInternal);
  if (backend_ == Backend::kSqlite) {
    EXPECT_EQ(TokenCount(org_.id), 0u);
  }
  auto found = store_->FindIdempotentCreate(Claim(org_.id, "storage_token", "k1", "body"));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

// The creates that start long work write an operation, an image record or a site with their
// key: a replay runs nothing, and a refused insert (here the image cap) records no key.
TEST_P(IdempotencyStoreTest, AnOperationIsWrittenWithItsKeyAndReplayedWithoutAnotherWrite) {
  int writes = 0;
  auto put = [&]() -> Result<std::string> {
    ++writes;
    OperationRecord op;
    op.id = NewId("op");
    op.org_id = org_.id;
    op.kind = "checkpoint";
    op.phase = "Running";
    op.started_at = 5000;
    RETURN_IF_ERROR(store_->PutOperation(op));
    return op.id;
  };
  auto first = store_->CreateOnce(Claim(org_.id, "checkpoint", "k1", "body"), put);
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = store_->CreateOnce(Claim(org_.id, "checkpoint", "k1", "body"), put);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->replayed);
  EXPECT_EQ(again->object_id, first->object_id);
  EXPECT_EQ(writes, 1);
  auto op = store_->GetOperation(org_.id, first->object_id);
  ASSERT_TRUE(op.ok()) << op.status().message();
  EXPECT_EQ(op->phase, "Running");
}

TEST_P(IdempotencyStoreTest, AnImageRefusedByItsCapRecordsNoKey) {
  auto insert = [&](const std::string& key) {
    ImageRecord rec;
    rec.id = NewId("img");
    rec.org_id = org_.id;
    rec.reference = "registry.test/app:1";
    rec.status = "pulling";
    rec.created_at = 5000;
    return store_->CreateOnce(Claim(org_.id, "image", key, "body"), [&]() -> Result<std::string> {
      RETURN_IF_ERROR(store_->InsertImageWithinCaps(rec, 1, 0));
      return rec.id;
    });
  };
  auto first = insert("k1");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(store_->GetImage(org_.id, first->object_id).ok());
  auto over = insert("k2");
  EXPECT_EQ(over.status().code(), Code::kResourceExhausted) << over.status().message();
  auto found = store_->FindIdempotentCreate(Claim(org_.id, "image", "k2", "body"));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
  auto listed = store_->ListImages(org_.id);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
}

TEST_P(IdempotencyStoreTest, ASiteAndItsReleaseAreWrittenWithTheirKey) {
  SiteRecord site;
  site.id = NewId("site");
  site.org_id = org_.id;
  site.name = "demo";
  site.hostname = "demo-abc.sites.test";
  site.created_at = 5000;
  SiteReleaseRecord release;
  release.id = NewId("rel");
  release.site_id = site.id;
  release.org_id = org_.id;
  release.created_at = 5000;
  site.release_id = release.id;
  auto made =
      store_->CreateOnce(Claim(org_.id, "site", "k1", "body"), [&]() -> Result<std::string> {
        RETURN_IF_ERROR(store_->PutSite(site, &release));
        return site.id;
      });
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto stored = store_->GetSite(org_.id, site.id);
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(stored->release_id, release.id);
  EXPECT_TRUE(store_->GetSiteRelease(release.id).ok());
  auto found = store_->FindIdempotentCreate(Claim(org_.id, "site", "k1", "body"));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->value_or(""), site.id);
}

TEST_P(IdempotencyStoreTest, AKeyOutsideOneTo255BytesIsRefused) {
  EXPECT_TRUE(CheckIdempotencyKey({"k", "h"}).ok());
  EXPECT_TRUE(CheckIdempotencyKey({std::string(255, 'k'), "h"}).ok());
  EXPECT_EQ(CheckIdempotencyKey({std::string(256, 'k'), "h"}).code(), Code::kInvalidArgument);
  EXPECT_EQ(CheckIdempotencyKey({"", "h"}).field(), "Idempotency-Key");
}

INSTANTIATE_TEST_SUITE_P(Backends, IdempotencyStoreTest,
                         testing::Values(Backend::kSqlite, Backend::kMemory),
                         testing_support::BackendName);

}  // namespace
}  // namespace adapt::store
