#include "base/redaction.h"

#include <gtest/gtest.h>

#include <string>

namespace adapt {
namespace {

const std::string kReplacementText = "\xEF\xBF\xBD";

TEST(Redact, ReplacesEveryOccurrence) {
  EXPECT_EQ(Redact("token=s3cret; again s3cret.", {"s3cret"}),
            "token=[REDACTED]; again [REDACTED].");
  EXPECT_EQ(Redact("s3crets3cret", {"s3cret"}), "[REDACTED][REDACTED]");
}

TEST(Redact, ReplacesLongestValueFirstSoNoPartIsLeft) {
  // Given shortest first: if "abc" went first, "def" of the longer value would be left over.
  EXPECT_EQ(Redact("x abcdef y abc", {"abc", "abcdef"}), "x [REDACTED] y [REDACTED]");
  EXPECT_EQ(Redact("x abcdef y abc", {"abcdef", "abc"}), "x [REDACTED] y [REDACTED]");
}

TEST(Redact, IgnoresEmptySecrets) {
  EXPECT_EQ(Redact("nothing to hide", {""}), "nothing to hide");
  EXPECT_EQ(Redact("pw=hunter2", {"", "hunter2", ""}), "pw=[REDACTED]");
}

TEST(Redact, LeavesTextWithoutSecretsUnchanged) {
  EXPECT_EQ(Redact("plain output\n", {"secret"}), "plain output\n");
  EXPECT_EQ(Redact("", {"secret"}), "");
  EXPECT_EQ(Redact("plain", {}), "plain");
}

TEST(Redact, IsCaseSensitive) {
  EXPECT_EQ(Redact("Secret secret", {"secret"}), "Secret [REDACTED]");
}

TEST(Redact, NeverMatchesInsideTheMaskOfAnother) {
  // A sequential replace would find "RED" again in the first value's "[REDACTED]".
  EXPECT_EQ(Redact("pw=hunter2", {"hunter2", "RED"}), "pw=[REDACTED]");
}

TEST(Redact, HidesEveryByteOfOverlappingValues) {
  // Whichever value went first, the other's bytes outside it would be left over.
  EXPECT_EQ(Redact("1 xabcdef 2", {"xab", "abcdef"}), "1 [REDACTED] 2");
  EXPECT_EQ(Redact("1 xabcdef 2", {"abcdef", "xab"}), "1 [REDACTED] 2");
  EXPECT_EQ(Redact("aaaa", {"aaa"}), "[REDACTED]");
}

TEST(Redact, IsLinearForRepetitiveValuesAndText) {
  // A search per value compares up to 32 KiB at each of the 1 MiB positions: seconds a call.
  std::string secret(32 * 1024, 'a');
  secret.back() = 'b';
  std::string text(1 << 20, 'a');
  EXPECT_EQ(Redact(text, {secret}), text);
  text += 'b';
  EXPECT_EQ(Redact(text, {secret}), std::string((1 << 20) - secret.size() + 1, 'a') + "[REDACTED]");
  // Many values at once.
  std::vector<std::string> many;
  for (int i = 0; i < 2000; ++i) many.push_back("v" + std::to_string(i * 7919) + "x");
  EXPECT_EQ(Redact("a v7919x b", many), "a [REDACTED] b");
}

TEST(RedactWindow, HidesAValueThatBeganInTheContextBeforeTheWindow) {
  // "hunter2secretZZ" starts 3 bytes before the window: its end must not show.
  std::string text = "aaahunter2secretZZbbb";
  EXPECT_EQ(RedactWindow(text, 6, {"hunter2secretZZ"}, false), "[REDACTED]bbb");
  // A value wholly in the context is not part of the window at all.
  EXPECT_EQ(RedactWindow("hunter2secretZZbbb", 15, {"hunter2secretZZ"}, false), "bbb");
}

TEST(RedactWindow, HidesAStartThatCouldEndAValueWhoseBeginningWasDropped) {
  // Bytes before the text are gone: "ter2secretZZ" may be the end of the value.
  EXPECT_EQ(RedactWindow("ter2secretZZBBBB", 0, {"hunter2secretZZ"}, true), "[REDACTED]BBBB");
  EXPECT_EQ(RedactWindow("ZBBBB", 0, {"hunter2secretZZ"}, true), "[REDACTED]BBBB");
  // Nothing was dropped: the same text is the output's real start.
  EXPECT_EQ(RedactWindow("ter2secretZZBBBB", 0, {"hunter2secretZZ"}, false), "ter2secretZZBBBB");
  // A start that is no end of any value stays.
  EXPECT_EQ(RedactWindow("BBBB", 0, {"hunter2secretZZ"}, true), "BBBB");
}

TEST(RedactWindow, MakesTheWindowValidUtf8AroundTheMasks) {
  EXPECT_EQ(RedactWindow(std::string("a\0b tok-123 \xff", 13), 0, {"tok-123"}, false),
            "a" + kReplacementText + "b [REDACTED] " + kReplacementText);
}

TEST(SecretStartAtEnd, CountsTheLongestEndThatCouldBeginAValue) {
  EXPECT_EQ(SecretStartAtEnd("start hunter2sec", {"hunter2secretZZ"}), 10u);
  EXPECT_EQ(SecretStartAtEnd("start h", {"hunter2secretZZ", "xyz"}), 1u);
  EXPECT_EQ(SecretStartAtEnd("start", {"hunter2secretZZ"}), 0u);
  // A whole value is no start: it is hidden as it is.
  EXPECT_EQ(SecretStartAtEnd("x hunter2secretZZ", {"hunter2secretZZ"}), 0u);
  // Repetitive values: the longest border wins.
  EXPECT_EQ(SecretStartAtEnd("aaaa", {"aaaaaa"}), 4u);
  EXPECT_EQ(SecretStartAtEnd("abab", {"ababc"}), 4u);
  EXPECT_EQ(SecretStartAtEnd("", {"abc"}), 0u);
  EXPECT_EQ(SecretStartAtEnd("abc", {}), 0u);
}

TEST(SecretStartAtEnd, IsLinearForLongRepetitiveValues) {
  // A 32 KiB value of one letter against 1 MiB of it: quadratic work would take minutes.
  std::string secret(32 * 1024, 'a');
  std::string output(1 << 20, 'a');
  EXPECT_EQ(SecretStartAtEnd(output, {secret}), secret.size() - 1);
  EXPECT_EQ(RedactWindow(output.substr(0, 100), 0, {secret}, true), "[REDACTED]");
}

}  // namespace
}  // namespace adapt
