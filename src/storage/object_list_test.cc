// ObjectStore::List: pages under a prefix, with and without a delimiter, match a listing made
// by hand at every page size, and a prefix listing reads no row outside the prefix.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "storage/object_store.h"
#include "storage/object_store_fixture.h"
#include "store/object_record_store.h"

namespace adapt::storage {
namespace {

using ObjectListTest = testing_support::ObjectStoreFixture;

// The rows of another ObjectRecordStore, with every key that ListObjects returned recorded.
class RecordingObjectRows final : public store::ObjectRecordStore {
 public:
  explicit RecordingObjectRows(store::ObjectRecordStore& rows) : rows_(rows) {}

  Result<std::string> PutObject(const store::ObjectRecord& o) override {
    return rows_.PutObject(o);
  }
  Result<store::ObjectRecord> GetObject(const std::string& org, const std::string& key) override {
    return rows_.GetObject(org, key);
  }
  Result<std::vector<store::ObjectRecord>> ListObjects(const std::string& org,
                                                       const std::string& prefix,
                                                       const std::string& after,
                                                       size_t limit) override {
    auto got = rows_.ListObjects(org, prefix, after, limit);
    if (got.ok())
      for (const auto& o : *got) read.push_back(o.key);
    return got;
  }
  Result<std::string> DeleteObject(const std::string& org, const std::string& key) override {
    return rows_.DeleteObject(org, key);
  }
  Result<std::vector<std::string>> ListReferencedBlobs() override {
    return rows_.ListReferencedBlobs();
  }
  Result<uint64_t> ObjectBytes(const std::string& org) override { return rows_.ObjectBytes(org); }
  Result<std::string> PutObjectWithinQuota(const store::ObjectRecord& o, uint64_t quota) override {
    return rows_.PutObjectWithinQuota(o, quota);
  }

  std::vector<std::string> read;

 private:
  store::ObjectRecordStore& rows_;
};

// A row without a blob: listing reads rows only.
void AddRow(store::ObjectRecordStore& rows, const std::string& org, const std::string& key) {
  store::ObjectRecord o;
  o.org_id = org;
  o.key = key;
  o.blob = "b" + std::to_string(std::hash<std::string>()(org + key));
  ASSERT_TRUE(rows.PutObject(o).ok()) << key;
}

// S3's listing of `keys` (sorted), made the obvious way: "K:" keys, "P:" common prefixes.
std::vector<std::string> ExpectedListing(const std::vector<std::string>& keys,
                                         const std::string& prefix, const std::string& delimiter) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k.compare(0, prefix.size(), prefix) != 0) continue;
    size_t at = delimiter.empty() ? std::string::npos : k.find(delimiter, prefix.size());
    std::string entry =
        at == std::string::npos ? "K:" + k : "P:" + k.substr(0, at + delimiter.size());
    if (out.empty() || out.back() != entry) out.push_back(entry);
  }
  return out;
}

// One page as ExpectedListing writes entries, in key order.
std::vector<std::string> Entries(const ObjectListing& page) {
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto& o : page.objects) sorted.emplace_back(o.key, "K:" + o.key);
  for (const auto& p : page.common_prefixes) sorted.emplace_back(p, "P:" + p);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> out;
  for (auto& [_, entry] : sorted) out.push_back(entry);
  return out;
}

TEST_F(ObjectListTest, PagesOfEverySizeMatchTheWholeListingUnderEveryPrefixAndDelimiter) {
  std::vector<std::string> keys = {"!x",  "0001",       "a",          "a!",    "a-b",     "a/1",
                                   "a/2", "a/b/3",      "a/b/4",      "a/c/5", "a/c/6/7", "a0",
                                   "aa",  "ab/1",       "ab/2",       "b",     "b/1",     "b/b/b",
                                   "bb",  "\xc3\xa9/1", "\xc3\xa9/2", "z/z"};
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) AddRow(*store_, "org_a", k);
  // Another organization's keys around and inside every prefix.
  for (const char* k : {"a", "a/0", "a/b/0", "ab/0", "b/0", "0", "zz"}) AddRow(*store_, "org_b", k);

  for (const std::string prefix :
       {"", "a", "a/", "a/b", "a/b/", "ab", "b", "\xc3\xa9", "\xc3\xa9/", "zz", "!"}) {
    for (const std::string delimiter : {"", "/", "b", "/b"}) {
      const auto want = ExpectedListing(keys, prefix, delimiter);
      for (size_t limit = 1; limit <= 6; ++limit) {
        SCOPED_TRACE("prefix \"" + prefix + "\" delimiter \"" + delimiter + "\" limit " +
                     std::to_string(limit));
        std::vector<std::string> got;
        std::string after;
        for (size_t pages = 0;; ++pages) {
          ASSERT_LE(pages, want.size()) << "the pages never end";
          auto page = objects_->List("org_a", prefix, delimiter, after, limit);
          ASSERT_TRUE(page.ok()) << page.status().message();
          auto entries = Entries(*page);
          EXPECT_LE(entries.size(), limit);
          got.insert(got.end(), entries.begin(), entries.end());
          if (!page->truncated) break;
          // A truncated page is full, and more follows it.
          EXPECT_EQ(entries.size(), limit);
          EXPECT_LT(got.size(), want.size());
          after = page->next_after;
        }
        EXPECT_EQ(got, want);
      }
    }
  }
}

TEST_F(ObjectListTest, APrefixListingReadsNoRowOutsideThePrefix) {
  // Many keys before the prefix and after it, as a one-character prefix once scanned them all.
  for (int i = 0; i < 300; ++i) AddRow(*store_, "org_a", "0/" + std::to_string(1000 + i));
  for (int i = 0; i < 300; ++i) AddRow(*store_, "org_a", "b/" + std::to_string(1000 + i));
  for (const char* k : {"a", "a/1", "a/2", "a/3", "a/x/1", "a/x/2", "ab"})
    AddRow(*store_, "org_a", k);
  RecordingObjectRows rows(*store_);
  ObjectStore listing(rows, dir_ + "/objects");

  std::vector<std::string> seen;
  std::string after;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = listing.List("org_a", "a", "", after, 2);
    ASSERT_TRUE(page.ok()) << page.status().message();
    for (const auto& o : page->objects) seen.push_back(o.key);
    if (!page->truncated) break;
    after = page->next_after;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "a/1", "a/2", "a/3", "a/x/1", "a/x/2", "ab"}));
  auto rolled = listing.List("org_a", "a/", "/", "", 1000);
  ASSERT_TRUE(rolled.ok());
  EXPECT_EQ(rolled->common_prefixes, std::vector<std::string>{"a/x/"});
  ASSERT_FALSE(rows.read.empty());
  for (const auto& key : rows.read) EXPECT_EQ(key[0], 'a') << key;
}

}  // namespace
}  // namespace adapt::storage
