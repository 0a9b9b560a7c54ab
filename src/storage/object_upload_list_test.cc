// ObjectStore::ListUploads: whose uploads, which of them, and in which order and pages.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <thread>

#include "base/time.h"
#include "os/files.h"
#include "os/temp_dir.h"
#include "storage/object_store.h"
#include "storage/object_store_fixture.h"
#include "store/store.h"

namespace adapt::storage {
namespace {

class UploadListTest : public testing_support::ObjectStoreFixture {
 protected:
  std::string Create(const std::string& org, const std::string& key) {
    auto id = objects_->CreateUpload(org, key, "");
    EXPECT_TRUE(id.ok()) << id.status().message();
    // Ids carry their start in milliseconds: one apart keeps the test's order the ids' order.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return id.ok() ? *id : "";
  }

  UploadListing List(const std::string& org, UploadListQuery q) {
    auto got = objects_->ListUploads(org, q);
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : UploadListing{};
  }

  // Every entry, page by page of `max`, as "key upload" and "prefix/" lines.
  std::vector<std::string> ListAll(const std::string& org, UploadListQuery q, size_t max,
                                   int* pages) {
    std::vector<std::string> out;
    q.max = max;
    *pages = 0;
    for (;;) {
      UploadListing page = List(org, q);
      ++*pages;
      EXPECT_LE(page.uploads.size() + page.common_prefixes.size(), max);
      for (const auto& u : page.uploads) out.push_back(u.key + " " + u.upload_id);
      for (const auto& p : page.common_prefixes) out.push_back(p);
      if (!page.truncated || *pages > 100) return out;
      q.key_marker = page.next_key_marker;
      q.upload_id_marker = page.next_upload_id_marker;
    }
  }
};

std::vector<std::string> Keys(const UploadListing& l) {
  std::vector<std::string> keys;
  for (const auto& u : l.uploads) keys.push_back(u.key);
  return keys;
}

TEST_F(UploadListTest, AnotherOrganizationsUploadsAreNeverListed) {
  Create("org_a", "mine");
  std::string theirs = Create("org_b", "theirs");
  EXPECT_EQ(Keys(List("org_a", {})), std::vector<std::string>{"mine"});
  EXPECT_EQ(Keys(List("org_b", {})), std::vector<std::string>{"theirs"});
  EXPECT_TRUE(List("org_c", {}).uploads.empty());
  // An upload directory the ledger does not give org_a is not read, whatever its meta says:
  // the listing never scans the uploads of every organization.
  const std::string stray = dir_ + "/objects/uploads/upl_0000000000000straystraystray";
  ASSERT_TRUE(os::MakeDirs(stray, 0700).ok());
  ASSERT_TRUE(os::WriteFileAtomic(stray + "/meta.json",
                                  R"({"org":"org_a","key":"stray","type":"","created":1})", 0600)
                  .ok());
  EXPECT_EQ(Keys(List("org_a", {})), std::vector<std::string>{"mine"});
  // Nor does one whose meta.json names another organization than the ledger's.
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/objects/uploads/" + theirs + "/meta.json",
                                  R"({"org":"org_a","key":"moved","type":"","created":1})", 0600)
                  .ok());
  EXPECT_TRUE(List("org_b", {}).uploads.empty());
  EXPECT_EQ(Keys(List("org_a", {})), std::vector<std::string>{"mine"});
}

TEST_F(UploadListTest, ShowsKeyIdAndStartInKeyOrderThenStartOrder) {
  const int64_t before = NowMillis();
  std::string b1 = Create("org_a", "b");
  std::string a = Create("org_a", "a");
  std::string b2 = Create("org_a", "b");
  std::string b3 = Create("org_a", "b");
  UploadListing l = List("org_a", {});
  ASSERT_EQ(l.uploads.size(), 4u);
  EXPECT_FALSE(l.truncated);
  EXPECT_EQ(l.uploads[0].upload_id, a);
  EXPECT_EQ(l.uploads[1].upload_id, b1);
  EXPECT_EQ(l.uploads[2].upload_id, b2);
  EXPECT_EQ(l.uploads[3].upload_id, b3);
  EXPECT_EQ(l.uploads[1].key, "b");
  EXPECT_GE(l.uploads[1].created_at, before);
  EXPECT_LE(l.uploads[1].created_at, l.uploads[2].created_at);
  EXPECT_TRUE(l.next_key_marker.empty());
}

TEST_F(UploadListTest, PrefixSelectsKeys) {
  Create("org_a", "logs/1");
  Create("org_a", "logs/2");
  Create("org_a", "logsx");
  Create("org_a", "data/1");
  UploadListQuery q;
  q.prefix = "logs/";
  EXPECT_EQ(Keys(List("org_a", q)), (std::vector<std::string>{"logs/1", "logs/2"}));
  q.prefix = "nothing/";
  EXPECT_TRUE(List("org_a", q).uploads.empty());
  q.prefix = "../";
  EXPECT_EQ(objects_->ListUploads("org_a", q).status().code(), Code::kInvalidArgument);
  q.prefix = "";
  q.delimiter = std::string(17, '/');
  EXPECT_EQ(objects_->ListUploads("org_a", q).status().field(), "delimiter");
}

TEST_F(UploadListTest, MarkersPageWithoutRepeatOrSkip) {
  for (const char* key : {"d", "a", "b", "a", "c", "a", "b", "e"}) Create("org_a", key);
  Create("org_b", "a");
  int pages = 0;
  std::vector<std::string> whole = ListAll("org_a", {}, 1000, &pages);
  ASSERT_EQ(whole.size(), 8u);
  EXPECT_EQ(pages, 1);
  for (size_t max : {1, 2, 3, 7}) {
    EXPECT_EQ(ListAll("org_a", {}, max, &pages), whole) << max;
    EXPECT_EQ(pages, static_cast<int>((8 + max - 1) / max)) << max;
  }
  // A key marker alone starts after every upload of that key.
  UploadListQuery q;
  q.key_marker = "a";
  EXPECT_EQ(Keys(List("org_a", q)), (std::vector<std::string>{"b", "b", "c", "d", "e"}));
  // An upload id marker without a key marker is ignored, as S3 does.
  q = {};
  q.upload_id_marker = "upl_zzzz";
  EXPECT_EQ(List("org_a", q).uploads.size(), 8u);
}

TEST_F(UploadListTest, AMarkerUploadAbortedBetweenPagesStillResumesAfterIt) {
  std::string a1 = Create("org_a", "a");
  std::string a2 = Create("org_a", "a");
  std::string a3 = Create("org_a", "a");
  UploadListQuery q;
  q.max = 2;
  UploadListing first = List("org_a", q);
  ASSERT_TRUE(first.truncated);
  ASSERT_EQ(first.uploads.size(), 2u);
  EXPECT_EQ(first.uploads[0].upload_id, a1);
  EXPECT_EQ(first.next_upload_id_marker, a2);
  ASSERT_TRUE(objects_->AbortUpload("org_a", a2, "a").ok());
  q.key_marker = first.next_key_marker;
  q.upload_id_marker = first.next_upload_id_marker;
  UploadListing second = List("org_a", q);
  ASSERT_EQ(second.uploads.size(), 1u);
  EXPECT_EQ(second.uploads[0].upload_id, a3);
  EXPECT_FALSE(second.truncated);
}

TEST_F(UploadListTest, DelimiterRollsKeysUpIntoCommonPrefixesCountedOnce) {
  for (const char* key : {"a/1", "a/2", "a/2", "b", "c/x/1", "c/y", "d"}) Create("org_a", key);
  UploadListQuery q;
  q.delimiter = "/";
  UploadListing l = List("org_a", q);
  EXPECT_EQ(Keys(l), (std::vector<std::string>{"b", "d"}));
  EXPECT_EQ(l.common_prefixes, (std::vector<std::string>{"a/", "c/"}));
  // Paged one entry at a time: a/, b, c/, d, each once.
  int pages = 0;
  EXPECT_EQ(ListAll("org_a", q, 1, &pages).size(), 4u);
  EXPECT_EQ(pages, 4);
  q.max = 1;
  UploadListing first = List("org_a", q);
  EXPECT_EQ(first.common_prefixes, std::vector<std::string>{"a/"});
  EXPECT_EQ(first.next_key_marker, "a/");
  EXPECT_TRUE(first.next_upload_id_marker.empty());
  // Under a prefix, the roll-up starts after it.
  q = {};
  q.prefix = "c/";
  q.delimiter = "/";
  l = List("org_a", q);
  EXPECT_EQ(Keys(l), std::vector<std::string>{"c/y"});
  EXPECT_EQ(l.common_prefixes, std::vector<std::string>{"c/x/"});
}

TEST_F(UploadListTest, PagesOfManyUploadsInAnyStartOrderComeOutInKeyOrder) {
  // Begun out of key order, many rolled up under two prefixes: each page keeps only its
  // first entries, and the pages together are the whole listing, in order, once each.
  std::vector<std::string> want;
  for (int i = 39; i >= 0; --i) {
    std::string key = (i % 3 == 0 ? "p/" : i % 3 == 1 ? "q/" : "k") + std::to_string(100 + i);
    auto id = objects_->CreateUpload("org_a", key, "");
    ASSERT_TRUE(id.ok());
    if (i % 3 == 2) want.push_back(key + " " + *id);
  }
  want.push_back("p/");
  want.push_back("q/");
  std::sort(want.begin(), want.end());
  UploadListQuery q;
  q.delimiter = "/";
  int pages = 0;
  std::vector<std::string> got = ListAll("org_a", q, 4, &pages);
  std::sort(got.begin(), got.end());  // ListAll puts each page's prefixes after its uploads
  EXPECT_EQ(got, want);
  EXPECT_EQ(pages, 4);  // 15 entries, 4 a page
  q.max = 3;
  UploadListing first = List("org_a", q);
  EXPECT_TRUE(first.truncated);
  EXPECT_EQ(Keys(first), (std::vector<std::string>{"k102", "k105", "k108"}));
}

TEST_F(UploadListTest, CompletedAbortedAndExpiredUploadsAreGone) {
  std::string done = Create("org_a", "done");
  std::string dropped = Create("org_a", "dropped");
  Create("org_a", "kept");
  auto etag =
      objects_->PutPart("org_a", done, "done", 1, [sent = false](char* buf, size_t) mutable {
        if (sent) return 0L;
        sent = true;
        buf[0] = 'x';
        return 1L;
      });
  ASSERT_TRUE(etag.ok());
  ASSERT_TRUE(objects_->CompleteUpload("org_a", done, "done", {{1, *etag}}).ok());
  ASSERT_TRUE(objects_->AbortUpload("org_a", dropped, "dropped").ok());
  EXPECT_EQ(Keys(List("org_a", {})), std::vector<std::string>{"kept"});
  EXPECT_EQ(objects_->ExpireUploads(std::numeric_limits<int64_t>::max()), 1u);
  EXPECT_TRUE(List("org_a", {}).uploads.empty());
}

TEST_F(UploadListTest, UploadsAreListedAgainAfterARestart) {
  std::string id = Create("org_a", "k");
  Create("org_b", "other");
  ObjectStore restarted(*store_, dir_ + "/objects");
  ASSERT_TRUE(restarted.Init().ok());
  auto l = restarted.ListUploads("org_a", {});
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->uploads.size(), 1u);
  EXPECT_EQ(l->uploads[0].upload_id, id);
}

}  // namespace
}  // namespace adapt::storage
