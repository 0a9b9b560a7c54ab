// The insertion sequence of the lists migration 37 gave one (endpoints, storage tokens, API
// keys, users), of volumes and app releases, and the one organizations page on, against
// SQLite and MemoryStore alike: it grows with each insert, orders rows created in the same
// millisecond, and an update keeps it, so that a newest-first page's cursor stays put.
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
std::vector<int64_t> SequencesOf(const std::vector<T>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.push_back(r.seq);
  return out;
}

template <typename T>
std::vector<std::string> IdsInOrder(const std::vector<T>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

// Strictly increasing and positive: every row has a place of its own.
void ExpectStrictlyIncreasing(const std::vector<int64_t>& seqs, size_t n) {
  ASSERT_EQ(seqs.size(), n);
  EXPECT_GT(seqs.front(), 0);
  for (size_t i = 1; i < seqs.size(); ++i) EXPECT_LT(seqs[i - 1], seqs[i]) << "at " << i;
}

TEST_P(StoreTest, EndpointsCarryAnInsertSequenceInCreationOrder) {
  std::vector<std::string> made;
  const std::string sandbox = MustCreate(Sandbox(org_.id, "a")).id;
  for (int port : {9000, 8000, 8500}) {
    EndpointRecord e{NewId("ep"), org_.id, sandbox, port, "", 1000};  // one millisecond
    e.hostname = e.id + ".example";
    ASSERT_TRUE(store_->PutEndpoint(e, std::nullopt).ok());
    made.push_back(e.id);
  }
  auto listed = store_->ListEndpoints(org_.id, "");
  ASSERT_TRUE(listed.ok());
  ExpectStrictlyIncreasing(SequencesOf(*listed), 3);
  EXPECT_EQ(IdsInOrder(*listed), made);
  auto found = store_->FindEndpointByHostname(made[1] + ".example");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->seq, (*listed)[1].seq);
}

TEST_P(StoreTest, StorageTokensKeepTheirSequenceWhenRevoked) {
  std::vector<std::string> made;
  for (int i = 0; i < 3; ++i) {
    StorageTokenRecord t{NewId("stk"), org_.id, "", "token", 9000, 0, 1000};
    ASSERT_TRUE(store_->PutStorageToken(t).ok());
    made.push_back(t.id);
  }
  auto before = store_->ListStorageTokens(org_.id);
  ASSERT_TRUE(before.ok());
  ExpectStrictlyIncreasing(SequencesOf(*before), 3);
  EXPECT_EQ(IdsInOrder(*before), made);
  ASSERT_TRUE(store_->RevokeStorageToken(org_.id, made[0], 2000).ok());
  auto after = store_->ListStorageTokens(org_.id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(SequencesOf(*after), SequencesOf(*before));
  EXPECT_EQ(store_->GetStorageToken(made[2])->seq, (*before)[2].seq);
}

TEST_P(StoreTest, ApiKeysAndUsersCarryAnInsertSequenceInCreationOrder) {
  std::vector<std::string> keys;
  for (const char* name : {"z", "a", "m"}) {
    ApiKeyRecord k{NewId("key"), org_.id, name, Sha256Hex(name), false, 1000, 0};
    ASSERT_TRUE(store_->CreateApiKey(k).ok());
    keys.push_back(k.id);
  }
  auto listed = store_->ListApiKeys(org_.id);
  ASSERT_TRUE(listed.ok());
  ExpectStrictlyIncreasing(SequencesOf(*listed), 3);
  EXPECT_EQ(IdsInOrder(*listed), keys);
  EXPECT_EQ(store_->FindApiKey(Sha256Hex("a"))->seq, (*listed)[1].seq);

  std::vector<std::string> users;
  for (const char* email : {"z@example.com", "a@example.com", "m@example.com"}) {
    UserRecord u{NewId("usr"), org_.id, email, "hash", 1000};
    ASSERT_TRUE(store_->CreateUser(u).ok());
    users.push_back(u.id);
  }
  auto listed_users = store_->ListUsers(org_.id);
  ASSERT_TRUE(listed_users.ok());
  ExpectStrictlyIncreasing(SequencesOf(*listed_users), 3);
  EXPECT_EQ(IdsInOrder(*listed_users), users);
  EXPECT_EQ(store_->GetUser(users[2])->seq, (*listed_users)[2].seq);
}

TEST_P(StoreTest, VolumesKeepTheirSequenceThroughAStatusChange) {
  for (const char* name : {"zeta", "alpha", "mid"}) {
    VolumeRecord v{NewId("vol"), org_.id, name, 1024, "creating", "", 1000};
    ASSERT_TRUE(store_->PutVolume(v).ok());
  }
  auto before = store_->ListVolumes(org_.id);
  ASSERT_TRUE(before.ok());
  ExpectStrictlyIncreasing(SequencesOf(*before), 3);
  EXPECT_EQ((*before)[0].name, "zeta");
  VolumeRecord ready = (*before)[0];
  ready.status = "ready";
  ASSERT_TRUE(store_->PutVolume(ready).ok());
  auto after = store_->ListVolumes(org_.id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(SequencesOf(*after), SequencesOf(*before));
  EXPECT_EQ((*after)[0].status, "ready");
}

TEST_P(StoreTest, OrganizationsAndAppReleasesListWithASequenceNewestFirst) {
  OrgRecord third = MustCreateOrg("third");
  auto orgs = store_->ListOrgs();
  ASSERT_TRUE(orgs.ok());
  ASSERT_EQ(orgs->size(), 3u);
  EXPECT_EQ((*orgs)[0].id, third.id);  // newest first: acme and other came before
  EXPECT_GT((*orgs)[0].seq, (*orgs)[1].seq);
  EXPECT_GT((*orgs)[1].seq, (*orgs)[2].seq);

  std::vector<std::string> made;
  for (int i = 0; i < 3; ++i) {
    AppReleaseRecord r;
    r.id = NewId("rel");
    r.app_id = "app_one";
    r.org_id = org_.id;
    r.created_at = 1000;
    ASSERT_TRUE(store_->PutAppRelease(r, 0).ok());
    made.push_back(r.id);
  }
  auto releases = store_->ListAppReleases("app_one");
  ASSERT_TRUE(releases.ok());
  ASSERT_EQ(releases->size(), 3u);
  EXPECT_EQ((*releases)[0].id, made[2]);  // newest first
  EXPECT_GT((*releases)[0].seq, (*releases)[1].seq);
  EXPECT_GT((*releases)[1].seq, (*releases)[2].seq);
  EXPECT_EQ(store_->GetAppRelease("app_one", made[0])->seq, (*releases)[2].seq);
}

// An insert between two pages of endpoints: the new one is not on the second page, and no
// earlier one is skipped or repeated.
TEST_P(StoreTest, ANewestFirstPageOfEndpointsIsStableUnderAnInsertBetweenPages) {
  std::vector<std::string> made;
  const std::string sandbox = MustCreate(Sandbox(org_.id, "a")).id;
  auto put = [&](int port) {
    EndpointRecord e{NewId("ep"), org_.id, sandbox, port, "", 1000};
    e.hostname = e.id + ".example";
    EXPECT_TRUE(store_->PutEndpoint(e, std::nullopt).ok());
    made.push_back(e.id);
  };
  for (int port : {1, 2, 3}) put(port);
  auto seq_of = [](const EndpointRecord& e) { return e.seq; };
  auto first = PageNewestFirst(*store_->ListEndpoints(org_.id, ""), {2, ""}, seq_of);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(IdsInOrder(first->items), (std::vector<std::string>{made[2], made[1]}));
  ASSERT_TRUE(first->next_cursor);
  put(4);
  auto second =
      PageNewestFirst(*store_->ListEndpoints(org_.id, ""), {2, *first->next_cursor}, seq_of);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(IdsInOrder(second->items), std::vector<std::string>{made[0]});
  EXPECT_FALSE(second->next_cursor);
}

}  // namespace
}  // namespace adapt::store
