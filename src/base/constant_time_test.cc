#include "base/constant_time.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt {
namespace {

TEST(ConstantTimeEquals, EqualStringsAreEqual) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(
      ConstantTimeEquals("k3y-0f-32-bytes-exactly-00000000", "k3y-0f-32-bytes-exactly-00000000"));
  std::string with_nul("a\0b", 3);
  EXPECT_TRUE(ConstantTimeEquals(with_nul, std::string("a\0b", 3)));
}

TEST(ConstantTimeEquals, ADifferenceAnywhereOrInLengthIsUnequal) {
  EXPECT_FALSE(ConstantTimeEquals("abcd", "Abcd"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abcD"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  // Bytes that differ only past a NUL still differ (no C-string comparison).
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace adapt
