#include "base/hkdf.h"

#include <gtest/gtest.h>

#include "base/hex.h"

namespace adapt {
namespace {

std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s += static_cast<char>(v);
  return s;
}

std::string Range(int from, int to) {
  std::string s;
  for (int v = from; v <= to; ++v) s += static_cast<char>(v);
  return s;
}

// RFC 5869's test case 1 inputs (the RFC gives SHA-256 answers only), over SHA-512. Expected:
// `openssl kdf -keylen 42 -kdfopt digest:SHA512 -kdfopt hexkey:0b0b..0b (22 bytes)
// -kdfopt hexsalt:000102030405060708090a0b0c -kdfopt hexinfo:f0f1f2f3f4f5f6f7f8f9 HKDF`,
// and the same from Python's hmac module.
TEST(HkdfSha512, MatchesRfc5869TestCase1InputsOverSha512) {
  auto okm = HkdfSha512(std::string(22, '\x0b'), Range(0x00, 0x0c), Range(0xf0, 0xf9), 42);
  ASSERT_TRUE(okm.ok()) << okm.status().message();
  EXPECT_EQ(HexEncode(*okm),
            "832390086cda71fb47625bb5ceb168e4c8e26a1a16ed34d9fc7fe92c1481579338da362cb8d9f925d7cb");
}

// RFC 5869's test case 3 shape: no salt (HashLen zero bytes) and no info. Expected: openssl kdf
// as above with hexsalt of 64 zero bytes, and Python's hmac with an empty salt.
TEST(HkdfSha512, AnEmptySaltActsAsHashLenZeros) {
  auto okm = HkdfSha512(std::string(22, '\x0b'), "", "", 42);
  ASSERT_TRUE(okm.ok()) << okm.status().message();
  EXPECT_EQ(HexEncode(*okm),
            "f5fa02b18298a72a8c23898a8703472c6eb179dc204c03425c970e3b164bf90fff22d04836d0e2343bac");
  auto zeros = HkdfSha512(std::string(22, '\x0b'), std::string(64, '\0'), "", 42);
  ASSERT_TRUE(zeros.ok());
  EXPECT_EQ(*okm, *zeros);
}

TEST(HkdfSha512, ReturnsTheAskedLengthAndAShorterOutputIsAPrefix) {
  std::string master = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  auto long_key = HkdfSha512(master, "salt", "info", 100);
  auto short_key = HkdfSha512(master, "salt", "info", 16);
  ASSERT_TRUE(long_key.ok() && short_key.ok());
  EXPECT_EQ(long_key->size(), 100u);
  EXPECT_EQ(short_key->size(), 16u);
  EXPECT_EQ(long_key->substr(0, 16), *short_key);
  EXPECT_NE(*HkdfSha512(master, "salt", "other", 16), *short_key);
  EXPECT_NE(*HkdfSha512(master, "other", "info", 16), *short_key);
}

}  // namespace
}  // namespace adapt
