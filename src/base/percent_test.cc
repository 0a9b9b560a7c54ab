#include "base/percent.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt {
namespace {

std::string EveryByteForPercent() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  return bytes;
}

TEST(PercentEncode, KeepsOnlyRfc3986UnreservedCharacters) {
  const std::string unreserved =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~";
  EXPECT_EQ(PercentEncode(unreserved), unreserved);
  // Every gen-delim and sub-delim of RFC 3986 section 2.2 is escaped.
  EXPECT_EQ(PercentEncode(":/?#[]@!$&'()*+,;="),
            "%3A%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D");
  EXPECT_EQ(PercentEncode(" %\"<>\\^`{|}"), "%20%25%22%3C%3E%5C%5E%60%7B%7C%7D");
}

TEST(PercentEncode, UsesUppercaseDigitsAsSigV4Requires) {
  EXPECT_EQ(PercentEncode("\xff\xab"), "%FF%AB");
  EXPECT_EQ(PercentEncode(std::string("\x00\x7f", 2)), "%00%7F");
  EXPECT_EQ(PercentEncode("caf\xC3\xA9"), "caf%C3%A9");
}

TEST(PercentEncode, KeepsSlashOnlyWhenAsked) {
  EXPECT_EQ(PercentEncode("a/b c"), "a%2Fb%20c");
  EXPECT_EQ(PercentEncode("a/b c", true), "a/b%20c");
  EXPECT_EQ(PercentEncode("sbx_1/../x"), "sbx_1%2F..%2Fx");
}

TEST(PercentDecode, RoundTripsEveryByte) {
  const std::string bytes = EveryByteForPercent();
  EXPECT_EQ(PercentDecode(PercentEncode(bytes), PlusSign::kLiteral), bytes);
  EXPECT_EQ(PercentDecode(PercentEncode(bytes), PlusSign::kSpace), bytes);
  EXPECT_EQ(PercentDecode(PercentEncode(bytes, true), PlusSign::kLiteral), bytes);
  EXPECT_EQ(PercentDecodeLenient(PercentEncode(bytes), PlusSign::kLiteral), bytes);
}

TEST(PercentDecode, TakesEitherCase) {
  EXPECT_EQ(PercentDecode("%2f%2F%c3%A9", PlusSign::kLiteral), "//\xC3\xA9");
}

TEST(PercentDecode, PlusIsASpaceOnlyInFormEncoding) {
  EXPECT_EQ(PercentDecode("a+b%2B", PlusSign::kSpace), "a b+");
  EXPECT_EQ(PercentDecode("a+b%2B", PlusSign::kLiteral), "a+b+");
  EXPECT_EQ(PercentDecodeLenient("a+b%2B", PlusSign::kSpace), "a b+");
  EXPECT_EQ(PercentDecodeLenient("a+b%2B", PlusSign::kLiteral), "a+b+");
}

TEST(PercentDecode, RefusesABrokenEscape) {
  for (const char* broken : {"%", "%4", "a%", "%zz", "%4g", "%g4", "%+1", "%-1", "% 1", "50%off"})
    EXPECT_FALSE(PercentDecode(broken, PlusSign::kLiteral).has_value()) << broken;
  EXPECT_EQ(PercentDecode("", PlusSign::kLiteral), "");
  EXPECT_EQ(PercentDecode("%41", PlusSign::kLiteral), "A");
  EXPECT_EQ(PercentDecode("x%41", PlusSign::kLiteral), "xA");
}

TEST(PercentDecode, DecodesOnceOnly) {
  EXPECT_EQ(PercentDecode("%252F", PlusSign::kLiteral), "%2F");
}

TEST(PercentDecodeLenient, KeepsABrokenEscapeAsItIs) {
  EXPECT_EQ(PercentDecodeLenient("50%off%", PlusSign::kLiteral), "50%off%");
  EXPECT_EQ(PercentDecodeLenient("%4", PlusSign::kLiteral), "%4");
  EXPECT_EQ(PercentDecodeLenient("%zz%41", PlusSign::kLiteral), "%zzA");
  EXPECT_EQ(PercentDecodeLenient("%%41", PlusSign::kLiteral), "%A");
  EXPECT_EQ(PercentDecodeLenient("%252F", PlusSign::kLiteral), "%2F");
}

}  // namespace
}  // namespace adapt
