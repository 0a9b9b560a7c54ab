#include "core/list_cursor.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

TEST(ListCursor, RoundTripsWhatItIssues) {
  auto parsed = ParseListCursor(*NextListCursor(42));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->value(), 42);
  EXPECT_FALSE(NextListCursor(std::nullopt).has_value());
  EXPECT_FALSE(ParseListCursor("")->has_value());
}

TEST(ListCursor, RefusesWhatItDidNotIssueWithoutThrowing) {
  for (const char* bad :
       {"c", "x1", "c-1", "c1x", "c 1", "c9999999999999999999", "c99999999999999999999999"}) {
    auto parsed = ParseListCursor(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(parsed.status().field(), "cursor") << bad;
  }
}

}  // namespace
}  // namespace adapt::core
