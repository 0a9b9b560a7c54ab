#include "base/list_cursor.h"

#include <gtest/gtest.h>

namespace adapt {
namespace {

TEST(ListCursor, RoundTripsWhatItIssues) {
  auto parsed = ParseListCursor(*NextListCursor(42));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->value(), 42);
  EXPECT_FALSE(NextListCursor(std::nullopt).has_value());
  EXPECT_FALSE(ParseListCursor("")->has_value());
}

TEST(ListCursor, RefusesWhatItDidNotIssueWithoutThrowing) {
  for (const char* bad : {"c", "x1", "c-1", "c1x", "c 1", "c9999999999999999999",
                          "c99999999999999999999999", "k6162"}) {
    auto parsed = ParseListCursor(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(parsed.status().field(), "cursor") << bad;
  }
}

TEST(ListCursor, KeyCursorsRoundTripAndRefuseSequenceCursorsAndGarbage) {
  auto parsed = ParseKeyListCursor(KeyListCursor("dir/a b"));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, "dir/a b");
  EXPECT_EQ(*ParseKeyListCursor(""), "");
  for (const char* bad : {"k", "kzz", "k616", "c12", "garbage"}) {
    auto refused = ParseKeyListCursor(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().field(), "cursor") << bad;
  }
}

TEST(PageLimit, OneToTwoHundredIsAllowedZeroAndTwoHundredOneAreNot) {
  EXPECT_TRUE(CheckPageLimit(1).ok());
  EXPECT_TRUE(CheckPageLimit(200).ok());
  EXPECT_EQ(CheckPageLimit(0).field(), "limit");
  EXPECT_EQ(CheckPageLimit(201).field(), "limit");
}

struct Row {
  int64_t seq;
  std::string name;
};

int64_t SeqOfRow(const Row& r) { return r.seq; }

TEST(PageNewestFirst, PagesNewestFirstAndAnInsertBetweenPagesChangesNothingLater) {
  std::vector<Row> rows = {{1, "a"}, {2, "b"}, {3, "c"}};
  auto first = PageNewestFirst(rows, {2, ""}, SeqOfRow);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].name, "c");
  EXPECT_EQ(first->items[1].name, "b");
  ASSERT_TRUE(first->next_cursor);
  rows.push_back({4, "d"});  // created between the pages
  auto second = PageNewestFirst(rows, {2, *first->next_cursor}, SeqOfRow);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].name, "a");
  EXPECT_FALSE(second->next_cursor);
}

TEST(PageNewestFirst, AFullLastPageHasNoNextCursor) {
  auto page = PageNewestFirst(std::vector<Row>{{1, "a"}, {2, "b"}}, {2, ""}, SeqOfRow);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 2u);
  EXPECT_FALSE(page->next_cursor);
}

TEST(PageNewestFirst, RefusesABadLimitOrCursor) {
  EXPECT_EQ(PageNewestFirst(std::vector<Row>{}, {0, ""}, SeqOfRow).status().field(), "limit");
  EXPECT_EQ(PageNewestFirst(std::vector<Row>{}, {201, ""}, SeqOfRow).status().field(), "limit");
  EXPECT_EQ(PageNewestFirst(std::vector<Row>{}, {5, "zz"}, SeqOfRow).status().field(), "cursor");
}

std::string NameOfRow(const Row& r) { return r.name; }

TEST(PageByKey, PagesInKeyOrderAndAKeyAddedBeforeTheCursorIsNotRepeated) {
  std::vector<Row> rows = {{1, "b"}, {2, "a"}, {3, "d"}};
  auto first = PageByKey(rows, {2, ""}, NameOfRow);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->items.size(), 2u);
  EXPECT_EQ(first->items[0].name, "a");
  EXPECT_EQ(first->items[1].name, "b");
  ASSERT_TRUE(first->next_cursor);
  rows.push_back({4, "aa"});  // sorts before the cursor: already passed
  auto second = PageByKey(rows, {2, *first->next_cursor}, NameOfRow);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->items.size(), 1u);
  EXPECT_EQ(second->items[0].name, "d");
  EXPECT_FALSE(second->next_cursor);
  EXPECT_EQ(PageByKey(rows, {0, ""}, NameOfRow).status().field(), "limit");
  EXPECT_EQ(PageByKey(rows, {2, "c5"}, NameOfRow).status().field(), "cursor");
}

TEST(MapPage, TurnsEachItemAndKeepsTheCursor) {
  Page<Row> page{{{7, "x"}, {6, "y"}}, "c6"};
  Page<std::string> names = MapPage(page, NameOfRow);
  EXPECT_EQ(names.items, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(names.next_cursor, std::optional<std::string>("c6"));
}

}  // namespace
}  // namespace adapt
