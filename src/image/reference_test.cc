#include "image/reference.h"

#include <gtest/gtest.h>

namespace adapt::image {
namespace {

TEST(ReferenceTest, DockerHubShortNamesGetLibraryAndLatest) {
  auto r = ParseReference("busybox");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->registry, "registry-1.docker.io");
  EXPECT_EQ(r->repository, "library/busybox");
  EXPECT_EQ(r->tag, "latest");
  EXPECT_EQ(r->BaseUrl(), "https://registry-1.docker.io");
}

TEST(ReferenceTest, RegistryWithPortTagAndDigest) {
  std::string d = "sha256:" + std::string(64, 'a');
  auto r = ParseReference("127.0.0.1:5000/team/app:v1.2@" + d);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->registry, "127.0.0.1:5000");
  EXPECT_EQ(r->repository, "team/app");
  EXPECT_EQ(r->tag, "v1.2");
  EXPECT_EQ(r->digest, d);
  EXPECT_EQ(r->ManifestRef(), d);
  EXPECT_EQ(r->BaseUrl(), "http://127.0.0.1:5000");
}

TEST(ReferenceTest, UserRepositoryOnDockerHubAndLocalhost) {
  EXPECT_EQ(ParseReference("user/app:1")->repository, "user/app");
  EXPECT_EQ(ParseReference("localhost/app")->registry, "localhost");
  EXPECT_EQ(ParseReference("docker.io/library/debian:12")->registry, "registry-1.docker.io");
  EXPECT_EQ(ParseReference("ghcr.io/o/r:t")->BaseUrl(), "https://ghcr.io");
}

TEST(ReferenceTest, RejectsMalformed) {
  for (const char* bad :
       {"", "UPPER/case", "a/../b", "app:", "app@sha256:12", "a//b", "app:bad tag", "-app"}) {
    auto r = ParseReference(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
    }
  }
}

TEST(ReferenceTest, ATagTooLongIsToldSo) {
  auto r = ParseReference("debian:" + std::string(200, 'x'), "image");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the tag must be 1 to 128 characters"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(ParseReference("debian:" + std::string(128, 'x'), "image").ok());
}

}  // namespace
}  // namespace adapt::image
