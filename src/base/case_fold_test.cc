#include "base/case_fold.h"

#include <gtest/gtest.h>

namespace adapt {
namespace {

TEST(FoldCase, LowersAsciiAndLettersBeyondIt) {
  EXPECT_EQ(FoldCase("Research-Worker 42"), "research-worker 42");
  EXPECT_EQ(FoldCase("\xCE\xA9MEGA"), "\xCF\x89mega");                          // ΩMEGA -> ωmega
  EXPECT_EQ(FoldCase("\xC3\x89T\xC3\x89"), "\xC3\xA9t\xC3\xA9");                // ÉTÉ -> été
  EXPECT_EQ(FoldCase("\xD0\x9C\xD0\x98\xD0\xA0"), "\xD0\xBC\xD0\xB8\xD1\x80");  // МИР -> мир
  EXPECT_EQ(FoldCase("\xF0\x9F\x98\x80 ok"), "\xF0\x9F\x98\x80 ok");            // no case: kept
  EXPECT_EQ(FoldCase(""), "");
}

TEST(FoldCase, KeepsBytesThatAreNotUtf8) {
  EXPECT_EQ(FoldCase("A\xFF"
                     "B"),
            "a\xFF"
            "b");
}

}  // namespace
}  // namespace adapt
