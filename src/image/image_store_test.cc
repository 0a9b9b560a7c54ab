// ImageStore::Pull against fake registries on loopback: what one organization's pull may and
// may not do to another's, and the checks made before a blob is fetched or a layer unpacked.
#include "image/image_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <optional>

#include "image/digest.h"
#include "image/fake_registry_test_support.h"
#include "os/files.h"

namespace adapt::image {
namespace {

namespace fs = std::filesystem;
using test_support::FakeImage;
using test_support::FakeRegistry;
using test_support::FakeReply;
using test_support::FakeRequest;
using test_support::Gzip;
using test_support::PlainTar;

class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("adapt-image-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    store_ = NewStore("store");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ImageStore> NewStore(const std::string& name) {
    auto destinations = RegistryDestinations::Parse({"127.0.0.1"});
    EXPECT_TRUE(destinations.ok());
    auto store = std::make_unique<ImageStore>((dir_ / name).string(), *destinations);
    EXPECT_TRUE(store->Init().ok());
    store->set_backoff_ms(1);
    return store;
  }

  // `org` pulls repository x, tag 1, from `registry` (keyed as core keys it).
  static Result<StoredImage> Pull(ImageStore& store, const std::string& org,
                                  FakeRegistry& registry) {
    std::string reference = registry.host() + "/x:1";
    return store.Pull(org + "/" + reference, reference, {});
  }

  size_t Layers() const { return os::ListDir((dir_ / "store/layers").string()).size(); }

  fs::path dir_;
  std::unique_ptr<ImageStore> store_;
};

TEST_F(ImageStoreTest, APullStoresTheImagesLayers) {
  FakeImage image({PlainTar({{"etc/hello", "hi"}})});
  FakeRegistry registry([&](const FakeRequest& r) { return image.Answer(r); });
  auto pulled = Pull(*store_, "org_a", registry);
  ASSERT_TRUE(pulled.ok()) << pulled.status().message();
  ASSERT_EQ(pulled->layer_dirs.size(), 1u);
  EXPECT_EQ(*os::ReadFile(pulled->layer_dirs[0] + "/etc/hello"), "hi");
}

// The config is read whole into memory and parsed: one declared over 4 MiB is never fetched.
TEST_F(ImageStoreTest, AConfigDeclaredOverTheMetadataLimitIsNeverFetched) {
  FakeImage image({PlainTar({{"a", "b"}})});
  image.SetManifest(50ull << 30);
  FakeRegistry registry([&](const FakeRequest& r) { return image.Answer(r); });
  auto pulled = Pull(*store_, "org_a", registry);
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.status().code(), Code::kResourceExhausted);
  EXPECT_NE(pulled.status().message().find("over the 4 MiB limit"), std::string::npos)
      << pulled.status().message();
  for (const auto& request : registry.requests())
    EXPECT_EQ(request.find("/blobs/"), std::string::npos) << request;
}

// Organization A's registry holds A's download of a layer (slow on purpose, then failing);
// organization B pulls an image with the same layer from its own registry meanwhile. B's pull
// must neither wait for A's registry nor fail with A's error (which names A's registry).
TEST_F(ImageStoreTest, AnotherOrganizationsSlowRegistryDoesNotHoldAPullOfTheSameLayer) {
  FakeImage image({PlainTar({{"etc/shared", "the same layer"}})});
  const std::string layer = Sha256Of(image.layers[0]);
  std::promise<void> asked;
  std::atomic<bool> asked_once = false;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  FakeRegistry slow([&](const FakeRequest& r) {
    if (!r.path.ends_with(layer)) return image.Answer(r);
    if (!asked_once.exchange(true)) asked.set_value();
    // Bounded only so that a regression fails the test instead of hanging it.
    released.wait_for(std::chrono::seconds(30));
    return FakeReply{404};
  });
  FakeRegistry own([&](const FakeRequest& r) { return image.Answer(r); });
  auto a = std::async(std::launch::async, [&] { return Pull(*store_, "org_a", slow); });
  asked.get_future().wait();
  auto b = Pull(*store_, "org_b", own);
  release.set_value();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(*os::ReadFile(b->layer_dirs.at(0) + "/etc/shared"), "the same layer");
  auto a_pulled = a.get();
  ASSERT_FALSE(a_pulled.ok());
  EXPECT_NE(a_pulled.status().message().find(slow.host()), std::string::npos)
      << a_pulled.status().message();
}

// B names A's blobs (by digest) in a manifest of its own registry, which cannot serve them.
// B's error must be the one it gets when the blobs are not stored at all: another wording
// would tell B that another organization has them.
TEST_F(ImageStoreTest, AStoredBlobAnotherRegistryCannotServeFailsAsIfItWereNotStored) {
  FakeImage image({PlainTar({{"secret", "A's private layer"}})});
  FakeRegistry a_registry([&](const FakeRequest& r) { return image.Answer(r); });
  ASSERT_TRUE(Pull(*store_, "org_a", a_registry).ok());
  FakeRegistry lying([&](const FakeRequest& r) {
    return r.path.ends_with("/manifests/1") ? image.Answer(r) : FakeReply{404};
  });
  auto stored = Pull(*store_, "org_b", lying);
  auto fresh = NewStore("fresh");
  auto not_stored = Pull(*fresh, "org_b", lying);
  ASSERT_FALSE(stored.ok());
  ASSERT_FALSE(not_stored.ok());
  EXPECT_EQ(stored.status().message(), not_stored.status().message());
  EXPECT_EQ(stored.status().code(), not_stored.status().code());
  EXPECT_EQ(stored.status().message().find("another"), std::string::npos)
      << stored.status().message();
}

// A blob that claims a stored layer's diff id is hashed to prove it, never unpacked: those
// bytes count against the pull's budget as an unpack's do. Each layer of an image could
// otherwise cost kMaxImageBytes of decompression from a small blob.
TEST_F(ImageStoreTest, ProvingBlobsOfAStoredLayerCountsAgainstThePullsBudget) {
  const std::string tar = PlainTar({{"data", std::string(600 << 10, 'a')}});
  const std::string diff_id = Sha256Of(tar);
  FakeImage plain({tar});
  FakeRegistry first([&](const FakeRequest& r) { return plain.Answer(r); });
  store_->set_unpack_limit(1 << 20);
  ASSERT_TRUE(Pull(*store_, "org_a", first).ok());
  // Two blobs of the same tar (two compression levels), each proven by hashing 600 KiB.
  FakeImage twice({Gzip(tar, 1), Gzip(tar, 9)}, {diff_id, diff_id});
  ASSERT_NE(Sha256Of(twice.layers[0]), Sha256Of(twice.layers[1]));
  FakeRegistry second([&](const FakeRequest& r) { return twice.Answer(r); });
  auto over = Pull(*store_, "org_b", second);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument) << over.status().message();
  EXPECT_NE(over.status().message().find("past the 32 GiB image-build limit"), std::string::npos)
      << over.status().message();
  // One such blob is within it.
  FakeImage once({Gzip(tar, 5)}, {diff_id});
  FakeRegistry third([&](const FakeRequest& r) { return once.Answer(r); });
  auto within = Pull(*store_, "org_b", third);
  EXPECT_TRUE(within.ok()) << within.status().message();
}

TEST_F(ImageStoreTest, ALayerIsNotUnpackedWithoutFreeSpaceBeyondItsSizeAndAMargin) {
  FakeImage image({PlainTar({{"a", "b"}})});
  FakeRegistry registry([&](const FakeRequest& r) { return image.Answer(r); });
  store_->set_free_space_margin(1ull << 60);  // more than any test machine has
  auto pulled = Pull(*store_, "org_a", registry);
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.status().code(), Code::kResourceExhausted);
  EXPECT_NE(pulled.status().message().find("too little free space to unpack layer"),
            std::string::npos)
      << pulled.status().message();
  EXPECT_EQ(Layers(), 0u);
  EXPECT_TRUE(os::ListDir((dir_ / "store/tmp").string()).empty());
  store_->set_free_space_margin(ImageStore::kDefaultFreeSpaceMargin);
  EXPECT_TRUE(Pull(*store_, "org_a", registry).ok());
  EXPECT_EQ(Layers(), 1u);
}

}  // namespace
}  // namespace adapt::image
