#include "base/ids.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace adapt {
namespace {

bool AllIn(const std::string& s, const std::string& alphabet) {
  return s.find_first_not_of(alphabet) == std::string::npos;
}

TEST(NewId, IsPrefixUnderscoreAndTwentyBase32Characters) {
  std::string id = NewId("sbx");
  ASSERT_EQ(id.size(), 4u + 20u) << id;
  EXPECT_EQ(id.substr(0, 4), "sbx_");
  EXPECT_TRUE(AllIn(id.substr(4), "abcdefghijklmnopqrstuvwxyz234567")) << id;
}

TEST(NewId, PassesItsOwnValidation) {
  for (const char* prefix : {"sbx", "org", "key"}) {
    std::string id = NewId(prefix);
    EXPECT_TRUE(IsValidId(id, prefix)) << id;
  }
}

TEST(NewId, IsUniqueOverManyCalls) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(NewId("sbx"));
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(IsValidId, AcceptsPrefixedLowerCaseAlphanumerics) {
  EXPECT_TRUE(IsValidId("sbx_a", "sbx"));
  EXPECT_TRUE(IsValidId("sbx_0123456789abcdefghijklmnopqrstuvwxyz", "sbx"));
  EXPECT_TRUE(IsValidId("sbx_" + std::string(64, 'z'), "sbx"));
}

TEST(IsValidId, RejectsPathTraversalAndSeparators) {
  EXPECT_FALSE(IsValidId("../", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_../etc", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_..", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_a/b", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_/", "sbx"));
  EXPECT_FALSE(IsValidId(std::string("sbx_a\0b", 7), "sbx"));
}

TEST(IsValidId, RejectsWrongPrefixCaseAndLength) {
  EXPECT_FALSE(IsValidId("", "sbx"));
  EXPECT_FALSE(IsValidId("sbx", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_", "sbx"));
  EXPECT_FALSE(IsValidId("sbxa", "sbx"));
  EXPECT_FALSE(IsValidId("sbx-abc", "sbx"));
  EXPECT_FALSE(IsValidId("org_abc", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_ABC", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_a-b", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_a b", "sbx"));
  EXPECT_FALSE(IsValidId("sbx_" + std::string(65, 'a'), "sbx"));
}

TEST(Sha256Hex, MatchesKnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Hex, HashesEmbeddedNulBytes) {
  EXPECT_NE(Sha256Hex(std::string("a\0b", 3)), Sha256Hex("a"));
}

TEST(RandomToken, UsesOnlyUrlSafeBase64CharactersWithoutPadding) {
  for (size_t n : {1u, 16u, 40u, 100u}) {
    std::string t = RandomToken(n);
    EXPECT_FALSE(t.empty());
    EXPECT_TRUE(AllIn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")) << t;
  }
}

TEST(RandomToken, IsUniqueOverManyCalls) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(RandomToken(16));
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(RandomToken, LengthIsBase64OfNBytes) {
  for (size_t n : {1u, 2u, 3u, 16u, 40u}) {
    EXPECT_EQ(RandomToken(n).size(), (4 * n + 2) / 3) << "n=" << n;
  }
}

}  // namespace
}  // namespace adapt
