// SiteService::Publish over the SQLite store and a real ObjectStore: under an Idempotency-Key
// a replay publishes no second release and copies no blob, another request with the key is a
// Conflict, and a site deleted since asks for a new key; a site keeps kMaxSiteReleases
// releases, whose bytes count against the object quota; an organization has at most
// kMaxSitesPerOrg sites.
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

TEST_F(SitePublishTest, ASiteKeepsItsLiveReleaseAndTheNewestOthersAndFreesTheRest) {
  std::vector<std::string> releases;
  for (size_t i = 0; i < kMaxSiteReleases + 2; ++i) {
    auto published = sites_->Publish("org_a", {"web", "demo"});
    ASSERT_TRUE(published.ok()) << published.status().message();
    releases.push_back(published->release_id);
  }
  EXPECT_EQ(store_->GetSiteRelease(releases[0]).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->GetSiteRelease(releases[1]).status().code(), Code::kNotFound);
  for (size_t i = 2; i < releases.size(); ++i)
    EXPECT_TRUE(store_->GetSiteRelease(releases[i]).ok()) << i;
  // The object's blob and one per kept release (each holds one file).
  EXPECT_EQ(Blobs(), 1 + kMaxSiteReleases);
  auto served = sites_->Serve(sites_->Get("org_a", "demo")->hostname, "/");
  EXPECT_TRUE(served.ok()) << served.status().message();
}

TEST_F(SitePublishTest, ReleasesCountAgainstTheObjectQuotaAndAPublishPastItCopiesNothing) {
  const uint64_t page = std::string("<h1>v1</h1>").size();
  objects_->SetQuotaBytes(3 * page - 1);
  ASSERT_TRUE(sites_->Publish("org_a", {"web", "demo"}).ok());
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 2 * page);
  const size_t blobs = Blobs();
  auto past = sites_->Publish("org_a", {"web", "demo"});
  EXPECT_EQ(past.status().code(), Code::kResourceExhausted);
  EXPECT_NE(past.status().message().find("quota"), std::string::npos);
  EXPECT_EQ(Blobs(), blobs);
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 2 * page);
  // The objects a release copied count too: no new object fits either.
  EXPECT_EQ(objects_->Put("org_a", "more", "text/plain", FromString("<h1>v1</h1>")).status().code(),
            Code::kResourceExhausted);
}

TEST_F(SitePublishTest, TheReleasesAPublishPrunesDoNotCountAgainstIt) {
  const uint64_t page = std::string("<h1>v1</h1>").size();
  objects_->SetQuotaBytes(page * (1 + kMaxSiteReleases));
  for (size_t i = 0; i < kMaxSiteReleases + 3; ++i) {
    auto published = sites_->Publish("org_a", {"web", "demo"});
    ASSERT_TRUE(published.ok()) << i << ": " << published.status().message();
  }
  EXPECT_EQ(*objects_->UsedBytes("org_a"), page * (1 + kMaxSiteReleases));
}

TEST_F(SitePublishTest, AnOrganizationHasAtMostOneHundredSites) {
  for (size_t i = 0; i < kMaxSitesPerOrg; ++i)
    ASSERT_TRUE(sites_->Publish("org_a", {"web", "s" + std::to_string(i)}).ok()) << i;
  const size_t blobs = Blobs();
  auto extra = sites_->Publish("org_a", {"web", "one-more"});
  EXPECT_EQ(extra.status().code(), Code::kResourceExhausted);
  EXPECT_NE(extra.status().message().find("100 sites"), std::string::npos);
  EXPECT_EQ(Blobs(), blobs);
  // An existing site still takes new releases, and another organization its own sites.
  EXPECT_TRUE(sites_->Publish("org_a", {"web", "s0"}).ok());
  ASSERT_TRUE(objects_->Put("org_b", "web/index.html", "text/html", FromString("<h1>b</h1>")).ok());
  EXPECT_TRUE(sites_->Publish("org_b", {"web", "one-more"}).ok());
}

TEST_F(SitePublishTest, AKeyOver255BytesIsRefused) {
  auto made = sites_->Publish("org_a", {"web", "demo"}, Key(std::string(256, 'k'), "x"));
  EXPECT_EQ(made.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(made.status().field(), "Idempotency-Key");
}

}  // namespace
}  // namespace adapt::storage
