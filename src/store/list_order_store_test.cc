// The insertion sequence the lists page on (base/list_cursor.h), against SQLite and MemoryStore
// alike: every account-wide list's rows carry a seq that grows with each insert and that an
// update (a secret's new value, an image's pull ending, an app's scale, a site's new release)
// keeps, so that a newest-first page and its cursor stay put when rows are added between pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/list_cursor.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

template <typename T>
std::vector<int64_t> SeqsOf(const std::vector<T>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(r.seq);
  return out;
}

void ExpectIncreasingAndPositive(const std::vector<int64_t>& seqs, size_t n) {
  ASSERT_EQ(seqs.size(), n);
  EXPECT_GT(seqs.front(), 0);
  EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()));
  EXPECT_EQ(std::adjacent_find(seqs.begin(), seqs.end()), seqs.end()) << "a seq is repeated";
}

SecretRecord NewSecret(const std::string& org_id, const std::string& name) {
  SecretRecord s;
  s.org_id = org_id;
  s.name = name;
  s.ciphertext = "sealed-" + name;
  s.updated_at = 1000;
  return s;
}

TEST_P(StoreTest, SecretsAreListedWithAnInsertSequenceThatANewValueKeeps) {
  for (const char* name : {"ZETA", "ALPHA", "MIDDLE"})
    ASSERT_TRUE(store_->PutSecret(NewSecret(org_.id, name)).ok());
  auto before = store_->ListSecrets(org_.id);
  ASSERT_TRUE(before.ok());
  ExpectIncreasingAndPositive(SeqsOf(*before), 3);
  EXPECT_EQ((*before)[0].name, "ZETA");                             // creation order, not by name
  ASSERT_TRUE(store_->PutSecret(NewSecret(org_.id, "ZETA")).ok());  // version 2
  auto after = store_->ListSecrets(org_.id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(SeqsOf(*after), SeqsOf(*before));
  EXPECT_EQ((*after)[0].version, 2);
}

TEST_P(StoreTest, ImagesSitesAppsAndAutomationsKeepTheirSequenceThroughUpdates) {
  std::vector<std::string> image_ids;
  for (int i = 0; i < 3; ++i) {
    ImageRecord r;
    r.id = NewId("img");
    r.org_id = org_.id;
    r.reference = "registry.example/app:" + std::to_string(i);
    r.status = "pulling";
    ASSERT_TRUE(store_->InsertImageWithinCaps(r, 0, 0).ok());
    image_ids.push_back(r.id);
  }
  auto images = store_->ListImages(org_.id);
  ASSERT_TRUE(images.ok());
  ExpectIncreasingAndPositive(SeqsOf(*images), 3);
  ImageRecord done = (*images)[0];
  done.status = "ready";
  ASSERT_TRUE(store_->PutImage(done).ok());
  EXPECT_EQ(SeqsOf(*store_->ListImages(org_.id)), SeqsOf(*images));

  for (int i = 0; i < 3; ++i) {
    SiteRecord s;
    s.id = NewId("site");
    s.org_id = org_.id;
    s.name = "site-" + std::to_string(i);
    s.hostname = s.id + ".sites.example";
    s.release_id = "rel_" + std::to_string(i);
    ASSERT_TRUE(store_->PutSite(s, nullptr).ok());
  }
  auto sites = store_->ListSites(org_.id);
  ASSERT_TRUE(sites.ok());
  ExpectIncreasingAndPositive(SeqsOf(*sites), 3);
  SiteRecord republished = (*sites)[0];
  republished.release_id = "rel_new";
  ASSERT_TRUE(store_->PutSite(republished, nullptr).ok());
  EXPECT_EQ(SeqsOf(*store_->ListSites(org_.id)), SeqsOf(*sites));

  for (int i = 0; i < 3; ++i) {
    AppRecord a;
    a.id = NewId("app");
    a.org_id = org_.id;
    a.name = "app-" + std::to_string(i);
    a.hostname = a.id + ".apps.example";
    a.release_id = "rel";
    a.created_at = 1000;  // the same creation time: the sequence still orders them
    ASSERT_TRUE(store_->PutApp(a).ok());
  }
  auto apps = store_->ListApps(org_.id);
  ASSERT_TRUE(apps.ok());
  ExpectIncreasingAndPositive(SeqsOf(*apps), 3);
  AppRecord scaled = (*apps)[0];
  scaled.replicas = 3;
  ASSERT_TRUE(store_->PutApp(scaled).ok());
  EXPECT_EQ(SeqsOf(*store_->ListApps(org_.id)), SeqsOf(*apps));

  for (int i = 0; i < 3; ++i) {
    AutomationRecord a;
    a.id = NewId("aut");
    a.org_id = org_.id;
    a.name = "auto-" + std::to_string(i);
    a.sandbox_id = "sbx_target";
    a.argv = {"true"};
    a.interval_seconds = 60;
    ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  }
  auto automations = store_->ListAutomations(org_.id);
  ASSERT_TRUE(automations.ok());
  ExpectIncreasingAndPositive(SeqsOf(*automations), 3);
}

// A newest-first page over what the store lists, an insert, then the next page: the new row
// is not on it and no earlier row is skipped or repeated.
TEST_P(StoreTest, ANewestFirstPageOfSecretsIsStableUnderAnInsertBetweenPages) {
  for (const char* name : {"A", "B", "C"})
    ASSERT_TRUE(store_->PutSecret(NewSecret(org_.id, name)).ok());
  auto seq_of = [](const SecretRecord& s) { return s.seq; };
  auto first = PageNewestFirst(*store_->ListSecrets(org_.id), {2, ""}, seq_of);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].name, "C");
  EXPECT_EQ(first->items[1].name, "B");
  ASSERT_TRUE(first->next_cursor);
  ASSERT_TRUE(store_->PutSecret(NewSecret(org_.id, "D")).ok());
  ASSERT_TRUE(store_->PutSecret(NewSecret(other_org_.id, "E")).ok());
  auto second = PageNewestFirst(*store_->ListSecrets(org_.id), {2, *first->next_cursor}, seq_of);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].name, "A");
  EXPECT_FALSE(second->next_cursor);
}

}  // namespace
}  // namespace adapt::store
