#include "image/manifest.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

// The config is read whole and parsed: a manifest declaring a 50 GiB one is refused before
// anything is fetched, and one at the 4 MiB metadata limit is still an image.
TEST(ManifestTest, AConfigOverTheMetadataLimitIsRefusedBeforeItIsFetched) {
  auto with_config = [](uint64_t size) {
    nlohmann::json j = {{"schemaVersion", 2},
                        {"mediaType", kOciManifest},
                        {"config", {{"digest", kA}, {"size", size}}},
                        {"layers", nlohmann::json::array()}};
    return ParseManifest(j.dump(), "");
  };
  auto huge = with_config(50ull << 30);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), Code::kResourceExhausted);
  EXPECT_NE(huge.status().message().find("over the 4 MiB limit"), std::string::npos)
      << huge.status().message();
  EXPECT_FALSE(with_config(kMaxMetadataBytes + 1).ok());
  EXPECT_TRUE(with_config(kMaxMetadataBytes).ok());
}

// Issue 14, 3.4: a registry's bytes never reach an error (and so the API, logs, the CLI's
// terminal). The marker stands for what a hostile registry would put there.
const std::string kMarker = "MARKER\x1b[31m<b>";

void ExpectNoEcho(const Status& st) {
  EXPECT_FALSE(st.ok());
  std::string shown = st.message().substr(0, 200);
  EXPECT_EQ(st.message().find("MARKER"), std::string::npos) << shown;
  EXPECT_EQ(st.message().find('\x1b'), std::string::npos) << shown;
  EXPECT_LT(st.message().size(), 300u) << shown;
}

std::string ImageManifest(const std::string& manifest_type, const std::string& layer_type) {
  nlohmann::json j = {{"schemaVersion", 2},
                      {"mediaType", manifest_type},
                      {"config", {{"digest", kA}, {"size", 1}}},
                      {"layers", {{{"mediaType", layer_type}, {"digest", kB}, {"size", 2}}}}};
  return j.dump();
}

// A registry (or an imported archive) names the types of its fields: a mediaType or a
// schemaVersion of another JSON type is refused or read as absent, never a thrown
// nlohmann::json::type_error (which on the pull's worker thread ended adaptd).
TEST(ManifestTest, FieldsOfTheWrongJsonTypeAreRefusedNotThrown) {
  std::string layer_type_number = R"({"schemaVersion":2,"config":{"digest":")" + kA +
                                  R"(","size":1},"layers":[{"mediaType":5,"digest":")" + kB +
                                  R"(","size":2}]})";
  auto m = ParseManifest(layer_type_number, kOciManifest);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layers[0].media_type, "");  // as if absent: a plain tar layer
  EXPECT_NO_THROW({
    auto schema = ParseManifest(R"({"schemaVersion":"1","mediaType":"x/y"})", "");
    EXPECT_EQ(schema.status().code(), Code::kUnsupported);
  });
  EXPECT_NO_THROW({
    auto index = ParseManifest(
        R"({"manifests":[{"mediaType":[],"digest":")" + kA + R"(","size":1,"platform":{"os":7}}]})",
        kOciIndex);
    ASSERT_TRUE(index.ok()) << index.status().message();
    EXPECT_EQ(index->manifests[0].platform, "/");
  });
}

// Layer sizes are the registry's numbers: two that wrap a 64-bit sum still total over the
// 32 GiB image-build limit.
TEST(ManifestTest, LayerSizesThatWouldWrapStillPassTheImageLimit) {
  const std::string half = std::to_string(1ull << 63);
  std::string body = R"({"schemaVersion":2,"config":{"digest":")" + kA +
                     R"(","size":1},"layers":[{"digest":")" + kB + R"(","size":)" + half +
                     R"(},{"digest":")" + kB + R"(","size":)" + half + R"(}]})";
  auto m = ParseManifest(body, kOciManifest);
  EXPECT_EQ(m.status().code(), Code::kResourceExhausted) << m.status().message();
}

TEST(ManifestTest, ErrorsNeverQuoteTheRegistrysBytes) {
  ExpectNoEcho(ParseManifest("{\"" + kMarker + "\": [" + kMarker, "").status());
  ExpectNoEcho(
      ParseManifest("{\"" + kMarker + "\":" + std::string(200, '[') + std::string(200, ']') + "}",
                    "")
          .status());
  ExpectNoEcho(ParseManifest("{}", "application/" + kMarker).status());
  ExpectNoEcho(ParseManifest(ImageManifest("application/" + kMarker, kOciManifest), "").status());
  ExpectNoEcho(ParseManifest(ImageManifest(std::string(100000, 'a'), kOciManifest), "").status());
  ExpectNoEcho(ParseManifest(ImageManifest(kOciManifest, "application/" + kMarker), "").status());
  ExpectNoEcho(ParseManifest(ImageManifest(kOciManifest, "foreign/" + kMarker), "").status());
  ExpectNoEcho(ParseManifest(R"({"schemaVersion":2,"config":{"digest":")" + kMarker +
                                 R"(","size":1},"layers":[]})",
                             "")
                   .status());
  ExpectNoEcho(LayerCompression(std::string(100000, 'x')).status());
  nlohmann::json config = {{"os", kMarker}, {"architecture", "amd64"}};
  ExpectNoEcho(ParseImageConfig(config.dump(), "image 'x'").status());
  nlohmann::json index = {
      {"schemaVersion", 2},
      {"mediaType", kOciIndex},
      {"manifests",
       {{{"digest", kA}, {"size", 1}, {"platform", {{"os", kMarker}, {"architecture", "x"}}}}}}};
  auto m = ParseManifest(index.dump(), "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ExpectNoEcho(PickPlatform(*m, "img:1").status());
}

TEST(ManifestTest, ErrorsStillNameAPrintableMediaType) {
  auto st = ParseManifest(ImageManifest(kOciManifest, "application/vnd.example.layer+lz4"), "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("'application/vnd.example.layer+lz4'"), std::string::npos)
      << st.status().message();
}

}  // namespace
}  // namespace adapt::image
