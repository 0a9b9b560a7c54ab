#include "core/image_policy.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

ImagePolicy MustMake(const ImagePolicyConfig& config, const std::vector<std::string>& also = {}) {
  auto p = ImagePolicy::Make(config, also);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : ImagePolicy();
}

TEST(ParseTrustedSource, ReadsRegistriesPrefixesAndRepositoriesAsDockerDoes) {
  auto s = ParseTrustedSource("docker.io/library/*");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ToString(), "docker.io/library/*");
  EXPECT_EQ(ParseTrustedSource("registry-1.docker.io/library/*")->ToString(),
            "docker.io/library/*");
  EXPECT_EQ(ParseTrustedSource("INDEX.docker.io/acme/*")->ToString(), "docker.io/acme/*");
  EXPECT_EQ(ParseTrustedSource("mathworks/matlab")->ToString(), "docker.io/mathworks/matlab");
  EXPECT_EQ(ParseTrustedSource("python")->ToString(), "docker.io/library/python");
  EXPECT_EQ(ParseTrustedSource("ghcr.io/*")->ToString(), "ghcr.io/*");
  EXPECT_EQ(ParseTrustedSource("127.0.0.1:5000/team/*")->ToString(), "127.0.0.1:5000/team/*");
  EXPECT_EQ(ParseTrustedSource("acme/*")->ToString(), "docker.io/acme/*");
}

TEST(ParseTrustedSource, RefusesTagsDigestsWildcardsInsideAndEmptyParts) {
  for (const char* bad :
       {"", "*", "python:3.12", "docker.io/library/python@sha256:ab", "docker.io/lib*/x",
        "docker.io//x", "docker.io/library/*/x", "docker.io/Library/x", "a/b/"}) {
    auto s = ParseTrustedSource(bad, "trustedImageSources");
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().field(), "trustedImageSources") << bad;
    }
  }
}

TEST(ImagePolicy, PrefixMatchesWholeComponentsOnly) {
  ImagePolicy p = MustMake({{"ghcr.io/acme/*"}});
  EXPECT_TRUE(p.Trusted("ghcr.io/acme/app:1"));
  EXPECT_TRUE(p.Trusted("ghcr.io/acme/team/app@sha256:" + std::string(64, 'a')));
  EXPECT_FALSE(p.Trusted("ghcr.io/acme-evil/app:1"));
  EXPECT_FALSE(p.Trusted("ghcr.io/acme:1"));
  EXPECT_FALSE(p.Trusted("docker.io/acme/app:1"));
  EXPECT_FALSE(p.Trusted("ghcr.io.evil.com/acme/app:1"));
}

TEST(ImagePolicy, DockerHubNamesAreOneRegistryAndShortNamesAreOfficialImages) {
  ImagePolicy p;  // docker.io/library/*
  for (const char* ok : {"python:3.13-slim", "debian", "library/debian:12", "docker.io/python",
                         "index.docker.io/library/python:3", "registry-1.docker.io/library/x"})
    EXPECT_TRUE(p.Trusted(ok)) << ok;
  for (const char* no : {"mathworks/matlab:r2026b", "ghcr.io/library/python", "quay.io/x/y",
                         "localhost/python", "import:img_abc"})
    EXPECT_FALSE(p.Trusted(no)) << no;
}

TEST(ImagePolicy, ExactRepositoriesAcceptAnyTagButNotNeighbours) {
  ImagePolicy p = MustMake({{"mathworks/matlab"}});
  EXPECT_TRUE(p.Trusted("mathworks/matlab:r2026b"));
  EXPECT_TRUE(p.Trusted("docker.io/mathworks/matlab"));
  EXPECT_FALSE(p.Trusted("mathworks/matlab-runtime:1"));
  EXPECT_FALSE(p.Trusted("python:3"));
}

TEST(ImagePolicy, TheAliasesImagesAreTrustedWhateverTheSources) {
  ImagePolicy p = MustMake({{"ghcr.io/acme/*"}}, {"adapt-env/node:debian12", "debian:12"});
  EXPECT_TRUE(p.Trusted("adapt-env/node:debian12"));
  EXPECT_TRUE(p.Trusted("docker.io/adapt-env/node:other"));
  EXPECT_TRUE(p.Trusted("debian:11"));
  EXPECT_FALSE(p.Trusted("adapt-env/other:1"));
  EXPECT_EQ(p.SourceNames(), std::vector<std::string>{"ghcr.io/acme/*"});
}

TEST(ImagePolicy, TheAssistantSurfaceHoldsRestrictedToTrustedSources) {
  ImagePolicy p;
  EXPECT_TRUE(p.Check("python:3.13-slim", "restricted", RequestSurface::kAssistant).ok());
  Status refused =
      p.Check("ghcr.io/acme/app:1", "restricted", RequestSurface::kAssistant, FieldNames());
  EXPECT_EQ(refused.code(), Code::kPermissionDenied);
  EXPECT_EQ(refused.field(), "image");
  EXPECT_NE(refused.message().find("trusted sources only (docker.io/library/*)"), std::string::npos)
      << refused.message();
}

TEST(ImagePolicy, DeveloperTakesAnyPublicImageOnlyWhenTheSwitchIsOn) {
  ImagePolicy off;
  Status st = off.Check("ghcr.io/acme/app:1", "developer", RequestSurface::kAssistant);
  EXPECT_EQ(st.code(), Code::kPermissionDenied);
  EXPECT_NE(st.message().find("developer_public_images is off"), std::string::npos);
  ImagePolicy on = MustMake({{"docker.io/library/*"}, true});
  EXPECT_TRUE(on.Check("ghcr.io/acme/app:1", "developer", RequestSurface::kAssistant).ok());
  Status restricted =
      on.Check("ghcr.io/acme/app:1", "restricted", RequestSurface::kAssistant, FieldNames());
  EXPECT_EQ(restricted.code(), Code::kPermissionDenied);
  EXPECT_NE(restricted.message().find("security_profile developer also accepts"),
            std::string::npos);
  // An imported image is nobody's public image.
  EXPECT_EQ(on.Check("import:img_abc", "developer", RequestSurface::kAssistant).code(),
            Code::kPermissionDenied);
}

TEST(ImagePolicy, TheApiIsOpenUnlessTheOperatorAppliesTheAssistantRule) {
  ImagePolicy open;
  EXPECT_TRUE(open.Check("ghcr.io/acme/app:1", "restricted", RequestSurface::kApi).ok());
  EXPECT_TRUE(open.Check("import:img_abc", "restricted", RequestSurface::kApi).ok());
  ImagePolicy closed = MustMake({{"docker.io/library/*"}, false, "assistant"});
  Status st = closed.Check("ghcr.io/acme/app:1", "restricted", RequestSurface::kApi, FieldNames());
  EXPECT_EQ(st.code(), Code::kPermissionDenied);
  EXPECT_NE(st.message().find("image policy \"assistant\""), std::string::npos);
  EXPECT_TRUE(closed.Check("python:3", "restricted", RequestSurface::kApi).ok());
}

TEST(ImagePolicy, PullsAndImportsFollowTheApiPolicy) {
  ImagePolicy open;
  EXPECT_TRUE(open.CheckPull("ghcr.io/acme/app:1").ok());
  EXPECT_TRUE(open.CheckImport().ok());
  ImagePolicy closed = MustMake({{"docker.io/library/*"}, false, "assistant"});
  Status st = closed.CheckPull("ghcr.io/acme/app:1");
  EXPECT_EQ(st.code(), Code::kPermissionDenied);
  EXPECT_EQ(st.field(), "reference");
  EXPECT_NE(st.message().find("trusted image sources rule"), std::string::npos);
  EXPECT_TRUE(closed.CheckPull("python:3").ok());
  EXPECT_EQ(closed.CheckImport().code(), Code::kPermissionDenied);
  // With public images on, a developer sandbox could use any image: it may be pulled.
  ImagePolicy public_on = MustMake({{"docker.io/library/*"}, true, "assistant"});
  EXPECT_TRUE(public_on.CheckPull("ghcr.io/acme/app:1").ok());
  EXPECT_EQ(public_on.CheckImport().code(), Code::kPermissionDenied);
}

TEST(ImagePolicy, MalformedSettingsAreRefusedNamingThem) {
  auto bad_source = ImagePolicy::Make({{"docker.io/lib*"}});
  ASSERT_FALSE(bad_source.ok());
  EXPECT_EQ(bad_source.status().field(), "trustedImageSources");
  auto bad_policy = ImagePolicy::Make({{"docker.io/library/*"}, false, "closed"});
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_EQ(bad_policy.status().field(), "imagePolicy");
}

TEST(ImagePolicy, AnUnparsableReferenceIsInvalidWhereThePolicyApplies) {
  ImagePolicy p;
  EXPECT_EQ(p.Check("UPPER/Case::x", "restricted", RequestSurface::kAssistant).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace adapt::core
