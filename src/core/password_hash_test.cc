#include "core/password_hash.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

// A cheap cost keeps the tests fast; the format and the checks are the same.
constexpr ScryptCost kCheap{10, 8, 1};

TEST(PasswordHash, TheRightPasswordVerifiesAndAnyOtherDoesNot) {
  auto hash = HashPassword("correct horse battery", kCheap);
  ASSERT_TRUE(hash.ok()) << hash.status().message();
  EXPECT_EQ(hash->rfind("scrypt$10$8$1$", 0), 0u) << *hash;
  EXPECT_TRUE(VerifyPassword("correct horse battery", *hash));
  EXPECT_FALSE(VerifyPassword("correct horse batterY", *hash));
  EXPECT_FALSE(VerifyPassword("", *hash));
}

TEST(PasswordHash, TheDefaultCostIsMemoryHardAndRecordedInTheText) {
  auto hash = HashPassword("a password of twenty");
  ASSERT_TRUE(hash.ok()) << hash.status().message();
  EXPECT_EQ(hash->rfind("scrypt$15$8$1$", 0), 0u) << *hash;
  EXPECT_TRUE(VerifyPassword("a password of twenty", *hash));
}

TEST(PasswordHash, EachHashHasItsOwnSalt) {
  auto a = HashPassword("same password", kCheap);
  auto b = HashPassword("same password", kCheap);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(VerifyPassword("same password", *b));
}

TEST(PasswordHash, MalformedOrExcessiveHashesNeverVerify) {
  auto good = HashPassword("pw-1234567", kCheap);
  ASSERT_TRUE(good.ok());
  std::string tail = good->substr(std::string("scrypt$10$8$1$").size());
  for (const std::string& bad :
       {std::string(""), std::string("scrypt"), "bcrypt$10$8$1$" + tail, "scrypt$30$8$1$" + tail,
        "scrypt$10$999$1$" + tail, std::string("scrypt$10$8$1$zz$00"),
        "scrypt$10$8$1$" + tail + "00", "scrypt$x$8$1$" + tail})
    EXPECT_FALSE(VerifyPassword("pw-1234567", bad)) << bad;
}

}  // namespace
}  // namespace adapt::core
