// The store keeps what the per-request key check reads and what a sandbox row's JSON columns
// decode to (sqlite_store_impl.h): a change through the store is seen by the next read.
#include <gtest/gtest.h>

#include "base/ids.h"
#include "store/decode_cache.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

TEST_P(StoreTest, ARevokedKeyIsNotFoundAtTheNextLookup) {
  ApiKeyRecord key{NewId("key"), org_.id, "ci", "hash-revoked", false, 1000};
  ASSERT_TRUE(store_->CreateApiKey(key).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store_->FindApiKey("hash-revoked").ok());
  ASSERT_TRUE(store_->DeleteApiKey(org_.id, key.id).ok());
  EXPECT_EQ(store_->FindApiKey("hash-revoked").status().code(), Code::kNotFound);
}

TEST_P(StoreTest, AKeyUnknownOnceIsFoundOnceCreated) {
  EXPECT_EQ(store_->FindApiKey("hash-later").status().code(), Code::kNotFound);
  ASSERT_TRUE(store_->CreateApiKey({NewId("key"), org_.id, "ci", "hash-later", false, 1000}).ok());
  auto found = store_->FindApiKey("hash-later");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->org_id, org_.id);
}

TEST_P(StoreTest, AnotherKeysRevocationLeavesTheRestFound) {
  ApiKeyRecord a{NewId("key"), org_.id, "a", "hash-a", false, 1000};
  ApiKeyRecord b{NewId("key"), other_org_.id, "b", "hash-b", false, 1000};
  ASSERT_TRUE(store_->CreateApiKey(a).ok());
  ASSERT_TRUE(store_->CreateApiKey(b).ok());
  ASSERT_TRUE(store_->FindApiKey("hash-a").ok());
  ASSERT_TRUE(store_->FindApiKey("hash-b").ok());
  ASSERT_TRUE(store_->DeleteApiKey(other_org_.id, b.id).ok());
  auto kept = store_->FindApiKey("hash-a");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->org_id, org_.id);  // tenants stay apart: each hash finds its own key
  EXPECT_EQ(store_->FindApiKey("hash-b").status().code(), Code::kNotFound);
}

TEST_P(StoreTest, AnOrganizationMadeAfterAMissIsFound) {
  std::string id = NewId("org");
  EXPECT_EQ(store_->GetOrg(id).status().code(), Code::kNotFound);
  ASSERT_TRUE(store_->CreateOrg({id, "later", false, 1000}).ok());
  ASSERT_TRUE(store_->GetOrg(id).ok());
}

// A config is written once, at creation; a result changes with each update.
TEST_P(StoreTest, EachSandboxReadsBackItsOwnConfigAndItsLatestResult) {
  SandboxRecord a = Sandbox(org_.id, "first");
  SandboxRecord b = Sandbox(org_.id, "second");
  b.config.cpu = 3;
  a = MustCreate(a);
  b = MustCreate(b);
  for (int i = 0; i < 2; ++i) {
    auto got_a = store_->GetSandbox(org_.id, a.id);
    auto got_b = store_->GetSandbox(org_.id, b.id);
    ASSERT_TRUE(got_a.ok() && got_b.ok());
    EXPECT_EQ(got_a->config, a.config);
    EXPECT_EQ(got_b->config, b.config);
  }
  a.result.exit_code = 7;
  a.result.stdout_text = "done\n";
  ASSERT_TRUE(store_->UpdateSandbox(a, {a.status}).ok());
  auto got = store_->GetSandbox(org_.id, a.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->result, a.result);
  auto listed = store_->ListSandboxes(org_.id, "", 10, std::nullopt);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 2u);
  EXPECT_EQ(listed->items[0].config, b.config);  // newest first
  EXPECT_EQ(listed->items[1].result, a.result);
}

TEST(DecodeCache, KeepsWhatTheTextDecodedTo) {
  DecodeCache<int> cache;
  int calls = 0;
  auto decode = [&] { return ++calls; };
  EXPECT_EQ(cache.Get("a", decode), 1);
  EXPECT_EQ(cache.Get("a", decode), 1);
  EXPECT_EQ(cache.Get("b", decode), 2);
  EXPECT_EQ(calls, 2);
}

TEST(DecodeCache, ADecodingThatThrowsKeepsNothing) {
  DecodeCache<int> cache;
  EXPECT_THROW(cache.Get("bad", []() -> int { throw std::runtime_error("not JSON"); }),
               std::runtime_error);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Get("bad", [] { return 5; }), 5);
}

TEST(DecodeCache, StartsOverPastItsBound) {
  DecodeCache<int> cache;
  std::string big(DecodeCache<int>::kMaxKeyBytes, 'x');
  for (int i = 0; i < 100; ++i) {
    big[0] = static_cast<char>('a' + i % 26);
    big[1] = static_cast<char>('a' + i / 26);
    cache.Get(big, [] { return 1; });
  }
  EXPECT_LE(cache.size() * DecodeCache<int>::kMaxKeyBytes, DecodeCache<int>::kMaxBytes);
  EXPECT_EQ(cache.Get(std::string(DecodeCache<int>::kMaxKeyBytes + 1, 'y'), [] { return 9; }), 9);
  EXPECT_EQ(cache.Get(std::string(DecodeCache<int>::kMaxKeyBytes + 1, 'y'), [] { return 8; }), 8);
}

}  // namespace
}  // namespace adapt::store
