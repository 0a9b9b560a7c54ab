// SiteService::Publish under an Idempotency-Key, over the SQLite store and a real ObjectStore:
// a replay publishes no second release and copies no blob, another request with the key is a
// Conflict, and a site deleted since asks for a new key.
#include "storage/site_service.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/ids.h"
#include "os/temp_dir.h"
#include "storage/object_store_fixture.h"
#include "store/store.h"

namespace adapt::storage {
namespace {

using testing_support::FromString;

store::IdempotencyKey Key(const std::string& key, const std::string& request) {
  return store::IdempotencyKey{key, Sha256Hex(request)};
}

class SitePublishTest : public testing_support::ObjectStoreFixture {
 protected:
  void SetUp() override {
    ObjectStoreFixture::SetUp();
    sites_ = std::make_unique<SiteService>(*store_, *objects_, "sites.test");
    ASSERT_TRUE(
        objects_->Put("org_a", "web/index.html", "text/html", FromString("<h1>v1</h1>")).ok());
  }

  size_t Blobs() {
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ + "/objects"))
      n += e.is_regular_file() ? 1 : 0;
    return n;
  }

  std::unique_ptr<SiteService> sites_;
};

TEST_F(SitePublishTest, AReplayAnswersTheSiteAndPublishesNoSecondRelease) {
  auto first = sites_->Publish("org_a", {"web", "demo"}, Key("k1", "web demo"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  const size_t blobs = Blobs();
  auto again = sites_->Publish("org_a", {"web", "demo"}, Key("k1", "web demo"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(again->release_id, first->release_id);
  EXPECT_EQ(Blobs(), blobs);
  // Without the key the same request is a new release.
  auto unkeyed = sites_->Publish("org_a", {"web", "demo"});
  ASSERT_TRUE(unkeyed.ok());
  EXPECT_EQ(unkeyed->id, first->id);
  EXPECT_NE(unkeyed->release_id, first->release_id);
}

TEST_F(SitePublishTest, TheKeyWithAnotherRequestIsAConflictAndCopiesNothing) {
  ASSERT_TRUE(sites_->Publish("org_a", {"web", "demo"}, Key("k1", "web demo")).ok());
  const size_t blobs = Blobs();
  auto other = sites_->Publish("org_a", {"web", "other"}, Key("k1", "web other"));
  EXPECT_EQ(other.status().code(), Code::kConflict);
  EXPECT_EQ(other.status().field(), "Idempotency-Key");
  EXPECT_EQ(Blobs(), blobs);
  auto sites = store_->ListSites("org_a");
  ASSERT_TRUE(sites.ok());
  EXPECT_EQ(sites->size(), 1u);
}

TEST_F(SitePublishTest, AnotherOrganizationsSameKeyPublishesItsOwnSite) {
  ASSERT_TRUE(objects_->Put("org_b", "web/index.html", "text/html", FromString("<h1>b</h1>")).ok());
  auto mine = sites_->Publish("org_a", {"web", "demo"}, Key("k1", "web demo"));
  auto theirs = sites_->Publish("org_b", {"web", "demo"}, Key("k1", "web demo"));
  ASSERT_TRUE(mine.ok() && theirs.ok()) << theirs.status().message();
  EXPECT_NE(theirs->id, mine->id);
}

TEST_F(SitePublishTest, ASiteDeletedSinceAsksForANewKey) {
  auto first = sites_->Publish("org_a", {"web", "demo"}, Key("k1", "web demo"));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(sites_->Delete("org_a", first->id).ok());
  auto again = sites_->Publish("org_a", {"web", "demo"}, Key("k1", "web demo"));
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_EQ(again.status().field(), "Idempotency-Key");
  EXPECT_NE(again.status().message().find("new key"), std::string::npos);
}

TEST_F(SitePublishTest, AKeyOver255BytesIsRefused) {
  auto made = sites_->Publish("org_a", {"web", "demo"}, Key(std::string(256, 'k'), "x"));
  EXPECT_EQ(made.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(made.status().field(), "Idempotency-Key");
}

}  // namespace
}  // namespace adapt::storage
