#include "image/image_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "image/archive_staging.h"
#include "image/digest.h"
#include "image/tar_test_support.h"

namespace adapt::image {
namespace {

using nlohmann::json;

using Entry = testing_support::TarEntry;
using testing_support::MakeTar;

ByteSource FromString(const std::string& data, bool fail_at_end = false) {
  auto pos = std::make_shared<size_t>(0);
  return [&data, pos, fail_at_end](char* buf, size_t n) -> long {
    if (*pos == data.size()) return fail_at_end ? -1 : 0;
    size_t k = std::min(n, data.size() - *pos);
    std::copy(data.data() + *pos, data.data() + *pos + k, buf);
    *pos += k;
    return static_cast<long>(k);
  };
}

std::string Hex(const std::string& digest) { return digest.substr(7); }

class ImageArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("adapt-archive-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<ArchiveImage> Read(const std::string& tar, const std::string& name = "") {
    auto staged = StageArchive(FromString(tar), dir_.string(), 1 << 20);
    if (!staged.ok()) return staged.status();
    staged_ = *staged;
    return ReadImageArchive(staged_, name);
  }

  // An OCI layout of one image with one layer; `layer_blob` overrides the stored layer bytes.
  std::vector<Entry> Oci(const std::string& layer, const std::string* layer_blob = nullptr) {
    std::string config = json{{"os", "linux"}, {"architecture", "amd64"}}.dump();
    json manifest = {{"schemaVersion", 2},
                     {"mediaType", kOciManifest},
                     {"config",
                      {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                       {"digest", Sha256Of(config)},
                       {"size", config.size()}}},
                     {"layers",
                      {{{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
                        {"digest", Sha256Of(layer)},
                        {"size", layer.size()}}}}};
    std::string m = manifest.dump();
    json index = {{"schemaVersion", 2},
                  {"manifests",
                   {{{"mediaType", kOciManifest},
                     {"digest", Sha256Of(m)},
                     {"size", m.size()},
                     {"annotations", {{"org.opencontainers.image.ref.name", "v1"}}}}}}};
    return {{"oci-layout", R"({"imageLayoutVersion":"1.0.0"})", ""},
            {"index.json", index.dump(), ""},
            {"blobs/sha256/" + Hex(Sha256Of(m)), m, ""},
            {"blobs/sha256/" + Hex(Sha256Of(config)), config, ""},
            {"blobs/sha256/" + Hex(Sha256Of(layer)), layer_blob ? *layer_blob : layer, ""}};
  }

  std::filesystem::path dir_;
  StagedArchive staged_;
};

TEST_F(ImageArchiveTest, ReadsAnOciLayout) {
  std::string layer = MakeTar({{"hello", "world", ""}});
  auto img = Read(MakeTar(Oci(layer)));
  ASSERT_TRUE(img.ok()) << img.status().message();
  EXPECT_EQ(img->format, "oci");
  EXPECT_EQ(img->name, "v1");
  ASSERT_EQ(img->layers.size(), 1u);
  EXPECT_EQ(img->layers[0].digest, Sha256Of(layer));
  EXPECT_EQ(img->blob_files.size(), 2u);  // config and layer; the manifest is kept as text
  EXPECT_EQ(img->manifest_digest, Sha256Of(img->manifest));
}

TEST_F(ImageArchiveTest, RefusesABlobThatDoesNotMatchItsDigest) {
  std::string layer = MakeTar({{"hello", "world", ""}});
  std::string tampered = MakeTar({{"hello", "WORLD", ""}});
  auto img = Read(MakeTar(Oci(layer, &tampered)));
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), Code::kInvalidArgument);
  EXPECT_NE(img.status().message().find("does not match its digest"), std::string::npos)
      << img.status().message();
}

TEST_F(ImageArchiveTest, AsksForANameThatIsNotThere) {
  std::string layer = MakeTar({{"a", "b", ""}});
  auto img = Read(MakeTar(Oci(layer)), "v2");
  ASSERT_FALSE(img.ok());
  EXPECT_NE(img.status().message().find("no image named 'v2'; it holds v1"), std::string::npos)
      << img.status().message();
}

TEST_F(ImageArchiveTest, ReadsADockerSaveArchiveWithALinkedLayer) {
  std::string layer = MakeTar({{"etc/x", "y", ""}});
  std::string config = json{{"os", "linux"},
                            {"architecture", "amd64"},
                            {"rootfs", {{"type", "layers"}, {"diff_ids", {Sha256Of(layer)}}}}}
                           .dump();
  std::string config_name = Hex(Sha256Of(config)) + ".json";
  json manifest = json::array(
      {{{"Config", config_name}, {"RepoTags", {"app:1"}}, {"Layers", {"b/layer.tar"}}}});
  // Old `docker save` links a layer it already wrote instead of writing it twice.
  auto img = Read(MakeTar({{"a/layer.tar", layer, ""},
                           {"b/layer.tar", "", "../a/layer.tar"},
                           {config_name, config, ""},
                           {"manifest.json", manifest.dump(), ""}}));
  ASSERT_TRUE(img.ok()) << img.status().message();
  EXPECT_EQ(img->format, "docker");
  EXPECT_EQ(img->name, "app:1");
  ASSERT_EQ(img->layers.size(), 1u);
  EXPECT_EQ(img->layers[0].digest, Sha256Of(layer));
  auto m = ParseManifest(img->manifest, "");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->config.digest, Sha256Of(config));
}

TEST_F(ImageArchiveTest, RefusesADockerLayerThatIsNotItsDiffId) {
  std::string layer = MakeTar({{"etc/x", "y", ""}});
  std::string config =
      json{{"rootfs", {{"type", "layers"}, {"diff_ids", {Sha256Of("other")}}}}}.dump();
  json manifest = json::array({{{"Config", "c.json"}, {"Layers", {"l.tar"}}}});
  auto img = Read(MakeTar(
      {{"l.tar", layer, ""}, {"c.json", config, ""}, {"manifest.json", manifest.dump(), ""}}));
  ASSERT_FALSE(img.ok());
  EXPECT_NE(img.status().message().find("does not match the config's diff id"), std::string::npos)
      << img.status().message();
}

TEST_F(ImageArchiveTest, StagingRefusesEscapesOversizeAndEarlyEnds) {
  auto staged = StageArchive(FromString(MakeTar({{"../x", "y", ""}})), dir_.string(), 1 << 20);
  ASSERT_FALSE(staged.ok());
  EXPECT_NE(staged.status().message().find("leaves the archive"), std::string::npos);
  // The archive's names reach errors (and logs) only made printable.
  staged =
      StageArchive(FromString(MakeTar({{"../\x1b]0;title\x07", "y", ""}})), dir_.string(), 1 << 20);
  ASSERT_FALSE(staged.ok());
  EXPECT_NE(staged.status().message().find("'../?]0;title?'"), std::string::npos)
      << staged.status().message();

  std::string big = MakeTar({{"big", std::string(4096, 'x'), ""}});
  staged = StageArchive(FromString(big), dir_.string(), 1000);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), Code::kPayloadTooLarge);

  std::string tar = MakeTar({{"a", std::string(10000, 'a'), ""}});
  std::string half = tar.substr(0, 3000);
  staged = StageArchive(FromString(half, true), dir_.string(), 1 << 20);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), Code::kInvalidArgument);

  auto none = StageArchive(FromString(MakeTar({{"x", "1", ""}, {"l", "", "/etc/passwd"}})),
                           dir_.string() + "/n", 1 << 20);
  EXPECT_FALSE(none.ok());  // the staging directory does not exist
}

// The host's disk is asked before each file and as each grows: a full one ends the staging,
// whatever the upload's own size (a compressed archive writes far more than it brings).
TEST_F(ImageArchiveTest, StagingAsksForRoomBeforeEachFileAndAsItGrows) {
  std::vector<uint64_t> asked;
  auto room = [&](uint64_t bytes) -> Status {
    asked.push_back(bytes);
    return Status::Ok();
  };
  auto staged = StageArchive(FromString(MakeTar({{"a", "12345", ""}, {"b", "", ""}})),
                             dir_.string(), 1 << 20, room);
  ASSERT_TRUE(staged.ok()) << staged.status().message();
  EXPECT_EQ(asked, (std::vector<uint64_t>{5, 0}));
  auto full = [](uint64_t) {
    return Status(Code::kResourceExhausted, "the host has too little free space");
  };
  std::filesystem::create_directories(dir_ / "full");
  staged =
      StageArchive(FromString(MakeTar({{"a", "x", ""}})), (dir_ / "full").string(), 1 << 20, full);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), Code::kResourceExhausted);
}

TEST(CleanArchivePath, Normalises) {
  std::string out;
  EXPECT_TRUE(CleanArchivePath("./blobs//sha256/ab/", out));
  EXPECT_EQ(out, "blobs/sha256/ab");
  EXPECT_FALSE(CleanArchivePath("a/../../b", out));
}

}  // namespace
}  // namespace adapt::image
