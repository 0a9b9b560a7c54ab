#include "image/manifest.h"

#include <gtest/gtest.h>

namespace adapt::image {
namespace {

const std::string kA = "sha256:" + std::string(64, 'a');
const std::string kB = "sha256:" + std::string(64, 'b');

TEST(ManifestTest, ParsesDockerSchema2) {
  std::string body =
      R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",
    "config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":")" +
      kA + R"(","size":10},
    "layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","digest":")" +
      kB + R"(","size":20}]})";
  auto m = ParseManifest(body, "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->is_index);
  EXPECT_EQ(m->config.digest, kA);
  ASSERT_EQ(m->layers.size(), 1u);
  EXPECT_EQ(m->layers[0].size, 20u);
  EXPECT_EQ(*LayerCompression(m->layers[0].media_type), "gzip");
}

TEST(ManifestTest, OciMediaTypeFromContentTypeAndZstd) {
  std::string body = R"({"schemaVersion":2,"config":{"digest":")" + kA + R"(","size":1},
    "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+zstd","digest":")" +
                     kB + R"(","size":2}]})";
  auto m = ParseManifest(body, "application/vnd.oci.image.manifest.v1+json; charset=utf-8");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*LayerCompression(m->layers[0].media_type), "zstd");
  EXPECT_EQ(*LayerCompression("application/vnd.oci.image.layer.v1.tar"), "");
}

TEST(ManifestTest, IndexPicksLinuxAmd64) {
  std::string body =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[
    {"digest":")" +
      kA + R"(","size":1,"platform":{"os":"linux","architecture":"arm64","variant":"v8"}},
    {"digest":")" +
      kB + R"(","size":2,"platform":{"os":"linux","architecture":"amd64"}}]})";
  auto m = ParseManifest(body, "");
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(m->is_index);
  auto d = PickPlatform(*m, "x");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->digest, kB);
}

TEST(ManifestTest, IndexWithoutAmd64NamesThePlatformsOffered) {
  std::string body =
      R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.list.v2+json","manifests":[
    {"digest":")" +
      kA + R"(","size":1,"platform":{"os":"linux","architecture":"arm64","variant":"v8"}},
    {"digest":")" +
      kB + R"(","size":2,"platform":{"os":"windows","architecture":"amd64"}}]})";
  auto m = ParseManifest(body, "");
  ASSERT_TRUE(m.ok());
  auto d = PickPlatform(*m, "img:1");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("linux/arm64/v8, windows/amd64"), std::string::npos)
      << d.status().message();
}

TEST(ManifestTest, RejectsBadDigestsSchema1AndOversizeImages) {
  EXPECT_FALSE(
      ParseManifest(R"({"schemaVersion":2,"config":{"digest":"md5:x","size":1},"layers":[]})", "")
          .ok());
  EXPECT_FALSE(ParseManifest(R"({"schemaVersion":1,"fsLayers":[]})", "").ok());
  EXPECT_FALSE(ParseManifest("not json", "").ok());
  std::string big = R"({"schemaVersion":2,"config":{"digest":")" + kA + R"(","size":1},
    "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":")" +
                    kB + R"(","size":34359738369}]})";
  auto m = ParseManifest(big, "");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("32 GiB"), std::string::npos);
}

}  // namespace
}  // namespace adapt::image
