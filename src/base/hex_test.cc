#include "base/hex.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt {
namespace {

std::string EveryByteForHex() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes;
}

TEST(HexEncode, EveryByteAsTwoLowercaseDigits) {
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(HexEncode(std::string("\x00\x7f\xff\x10", 4)), "007fff10");
  const unsigned char digest[] = {0xde, 0xad, 0xbe, 0xef};
  EXPECT_EQ(HexEncode(digest, sizeof digest), "deadbeef");
}

TEST(HexDecode, RoundTripsEveryByte) {
  const std::string bytes = EveryByteForHex();
  EXPECT_EQ(HexEncode(bytes).size(), 512u);
  EXPECT_EQ(HexDecode(HexEncode(bytes)), bytes);
}

TEST(HexDecode, TakesEitherCase) {
  EXPECT_EQ(HexDecode("00fFaB"), std::string("\x00\xff\xab", 3));
  EXPECT_EQ(HexDecode("DEADBEEF"), HexDecode("deadbeef"));
  EXPECT_EQ(HexDecode(""), std::string());
}

TEST(HexDecode, RefusesAnythingButPairsOfDigits) {
  EXPECT_FALSE(HexDecode("abc").has_value());
  EXPECT_FALSE(HexDecode("zz").has_value());
  EXPECT_FALSE(HexDecode("0g").has_value());
  EXPECT_FALSE(HexDecode("1z").has_value());
  EXPECT_FALSE(HexDecode("+1").has_value());
  EXPECT_FALSE(HexDecode("0x").has_value());
  EXPECT_FALSE(HexDecode(" 1").has_value());
  EXPECT_FALSE(HexDecode(std::string("0\0", 2)).has_value());
}

}  // namespace
}  // namespace adapt
