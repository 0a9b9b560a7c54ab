#include "base/text.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size()))
    ++n;
  return n;
}

TEST(SanitizeUtf8, LeavesAsciiAlone) {
  EXPECT_EQ(SanitizeUtf8("hello, world\n\t~"), "hello, world\n\t~");
  EXPECT_EQ(SanitizeUtf8(""), "");
}

TEST(SanitizeUtf8, ReplacesEachNulWithTheReplacementCharacter) {
  std::string in("a\0b\0\0c", 6);
  EXPECT_EQ(SanitizeUtf8(in), "a" + kFffd + "b" + kFffd + kFffd + "c");
}

TEST(SanitizeUtf8, KeepsValidMultibyteSequences) {
  const std::string valid =
      "caf\xC3\xA9 "       // é, 2 bytes
      "\xE2\x82\xAC "      // €, 3 bytes
      "\xF0\x9F\x98\x80 "  // 😀, 4 bytes
      "\xF4\x8F\xBF\xBF "  // U+10FFFF, the last code point
      "\xEF\xBF\xBD";      // U+FFFD itself
  EXPECT_EQ(SanitizeUtf8(valid), valid);
}

TEST(SanitizeUtf8, ReplacesStrayAndImpossibleBytes) {
  EXPECT_EQ(SanitizeUtf8("a\x80z"), "a" + kFffd + "z");  // lone continuation byte
  EXPECT_EQ(SanitizeUtf8("a\xFFz"), "a" + kFffd + "z");
  EXPECT_EQ(SanitizeUtf8("a\xFEz"), "a" + kFffd + "z");
  EXPECT_EQ(SanitizeUtf8("a\xC3z"), "a" + kFffd + "z");  // lead byte without continuation
}

TEST(SanitizeUtf8, ReplacesTruncatedSequenceAtTheEnd) {
  std::string out = SanitizeUtf8("ok\xE2\x82");
  EXPECT_EQ(out.substr(0, 2), "ok");
  EXPECT_GE(Count(out, kFffd), 1u);
  EXPECT_EQ(out.find('\xE2'), std::string::npos);
  EXPECT_EQ(out.find('\x82'), std::string::npos) << "a stray continuation byte leaked";
}

TEST(SanitizeUtf8, RejectsOverlongForms) {
  // "/" encoded in 2, 3 and 4 bytes, and the overlong NUL "\xC0\x80" (modified UTF-8).
  for (std::string overlong :
       {"\xC0\xAF", "\xE0\x80\xAF", "\xF0\x80\x80\xAF", "\xC0\x80", "\xC1\xBF"}) {
    std::string out = SanitizeUtf8("<" + overlong + ">");
    EXPECT_EQ(out.front(), '<');
    EXPECT_EQ(out.back(), '>');
    std::string middle = out.substr(1, out.size() - 2);
    EXPECT_EQ(middle.find('/'), std::string::npos);
    EXPECT_EQ(middle.find('\0'), std::string::npos);
    // Every byte of an overlong form is invalid where it stands: all become U+FFFD.
    EXPECT_EQ(middle,
              [&] {
                std::string r;
                for (size_t i = 0; i < overlong.size(); ++i) r += kFffd;
                return r;
              }())
        << "for " << testing::PrintToString(overlong);
  }
}

TEST(SanitizeUtf8, RejectsSurrogatesAndCodePointsPastTheLast) {
  std::string surrogate = SanitizeUtf8("\xED\xA0\x80");  // U+D800
  EXPECT_EQ(surrogate.find('\xED'), std::string::npos);
  EXPECT_GE(Count(surrogate, kFffd), 1u);
  std::string too_big = SanitizeUtf8("\xF4\x90\x80\x80");  // U+110000
  EXPECT_EQ(too_big.find('\xF4'), std::string::npos);
  EXPECT_GE(Count(too_big, kFffd), 1u);
}

TEST(SanitizeUtf8, ResynchronisesAfterAnInvalidByte) {
  // The invalid lead byte must not swallow the valid character that follows it.
  EXPECT_EQ(SanitizeUtf8("\xE2\xC3\xA9"), kFffd + "\xC3\xA9");
}

TEST(IsValidUtf8, AcceptsWholeSequencesAndRefusesBrokenOnes) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(IsValidUtf8("ok\xff"));
}

TEST(PartialUtf8AtEnd, CountsTheBytesOfAnUnfinishedCharacter) {
  EXPECT_EQ(PartialUtf8AtEnd(""), 0u);
  EXPECT_EQ(PartialUtf8AtEnd("caf\xc3\xa9"), 0u);
  EXPECT_EQ(PartialUtf8AtEnd("caf\xc3"), 1u);
  EXPECT_EQ(PartialUtf8AtEnd("x\xe2\x82"), 2u);
  EXPECT_EQ(PartialUtf8AtEnd("x\xf0\x9f\x98"), 3u);
  EXPECT_EQ(PartialUtf8AtEnd("x\xf0\x9f\x98\x80"), 0u);
}

}  // namespace

TEST(HasControlCharacter, FindsC0AndDelButNotPrintableOrMultibyteText) {
  EXPECT_FALSE(HasControlCharacter(""));
  EXPECT_FALSE(HasControlCharacter("research worker ~ caf\xC3\xA9"));
  for (std::string bad : {std::string("a\0b", 3), std::string("a\nb"), std::string("\x1b[31m"),
                          std::string("x\x7f"), std::string("\t")})
    EXPECT_TRUE(HasControlCharacter(bad)) << bad;
}

TEST(PrintableAscii, KeepsPrintableAsciiAndReplacesEveryOtherByte) {
  EXPECT_EQ(PrintableAscii("etc/passwd ok~"), "etc/passwd ok~");
  EXPECT_EQ(PrintableAscii(std::string("a\x1b[31mb\nc\0d\x7f", 12)), "a?[31mb?c?d?");
  // U+202E (right-to-left override) is three bytes, each replaced.
  EXPECT_EQ(PrintableAscii("x\xE2\x80\xAEy"), "x???y");
}

TEST(PrintableAscii, CutsLongTextAndSaysSo) {
  EXPECT_EQ(PrintableAscii(std::string(10, 'a'), 4), "aaaa...");
  EXPECT_EQ(PrintableAscii("abcd", 4), "abcd");
  EXPECT_EQ(PrintableAscii(std::string(500, 'b')).size(), 123u);
}

TEST(ParseDecimal, TakesDigitsOnlyWithinInt64) {
  EXPECT_EQ(ParseDecimal("0"), 0);
  EXPECT_EQ(ParseDecimal("1000"), 1000);
  EXPECT_EQ(ParseDecimal("-7"), -7);
  EXPECT_EQ(ParseDecimal("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "+1", "12abc", "0x10", "1e3", "9223372036854775808", "-"})
    EXPECT_FALSE(ParseDecimal(bad).has_value()) << bad;
}

}  // namespace adapt
