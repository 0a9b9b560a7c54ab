#include "cli/output.h"

#include <gtest/gtest.h>

namespace adapt::cli {
namespace {

TEST(FormatTable, AlignsColumnsToTheWidestCellWithoutTrailingSpaces) {
  std::string table = FormatTable({"ID", "STATUS", "NAME"},
                                  {{"sbx_1", "running", "web"}, {"sbx_22", "failed", ""}});
  EXPECT_EQ(table,
            "ID      STATUS   NAME\n"
            "sbx_1   running  web\n"
            "sbx_22  failed\n");
}

TEST(FormatTable, EmptyListPrintsOnlyTheHeader) {
  EXPECT_EQ(FormatTable({"ID", "NAME"}, {}), "ID  NAME\n");
}

TEST(FormatTable, ShortRowsGetEmptyCellsAndWidthCountsCharacters) {
  EXPECT_EQ(FormatTable({"A", "B", "C"}, {{"é"}, {"xy", "z", "w"}}),
            "A   B  C\n"
            "é\n"
            "xy  z  w\n");
}

TEST(FormatFields, AlignsValuesAndSkipsEmptyOnes) {
  EXPECT_EQ(FormatFields({{"id", "sbx_1"}, {"signal", ""}, {"memoryMiB", "1024"}}),
            "id:         sbx_1\n"
            "memoryMiB:  1024\n");
}

TEST(JsonCell, StringsBareNullEmptyOthersAsJson) {
  EXPECT_EQ(JsonCell("x"), "x");
  EXPECT_EQ(JsonCell(nullptr), "");
  EXPECT_EQ(JsonCell(3), "3");
  EXPECT_EQ(JsonCell(nlohmann::json::array({1, 2})), "[1,2]");
}

TEST(PrettyJson, IndentsTwoSpacesAndEndsWithNewline) {
  EXPECT_EQ(PrettyJson({{"a", 1}}), "{\n  \"a\": 1\n}\n");
  EXPECT_NO_THROW(PrettyJson(std::string("bad \xff byte")));
}

TEST(FormatNextCursor, OnlyWhenSet) {
  EXPECT_EQ(FormatNextCursor({{"items", nlohmann::json::array()}, {"nextCursor", "abc"}}),
            "next cursor: abc\n");
  EXPECT_EQ(FormatNextCursor({{"nextCursor", nullptr}}), "");
}

TEST(FormatErrorLine, MessageAndField) {
  EXPECT_EQ(FormatErrorLine(InvalidArgument("memoryMiB", "memoryMiB must be 128..65536")),
            "adapt: memoryMiB must be 128..65536 (field: memoryMiB)");
  EXPECT_EQ(FormatErrorLine(NotFound("sandbox not found")), "adapt: sandbox not found");
}

TEST(FormatErrorLine, StaysOnOneLine) {
  EXPECT_EQ(FormatErrorLine(Internal("first\r\nsecond")), "adapt: first second");
}

// A name a sandbox chose (a file, an object key, a label, startup output) reaches the terminal
// shown, not acted on: OSC 52 would set the user's clipboard, CSI rewrite the screen.
TEST(TerminalSafe, ShowsControlsAndKeepsTextTabsAndUtf8) {
  EXPECT_EQ(TerminalSafe("a\x1b]52;c;eA==\x07"
                         "b"),
            "a\\x1b]52;c;eA==\\x07b");
  EXPECT_EQ(TerminalSafe("tab\there \x7f"), "tab\there \\x7f");
  EXPECT_EQ(TerminalSafe("csi \xc2\x9b"
                         "2J \xc3\xa9"),
            "csi \\u009b2J \xc3\xa9");
  std::string table = FormatTable({"NAME"}, {{"x\x1b[2Jy"}});
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_NE(table.find("x\\x1b[2Jy"), std::string::npos) << table;
  std::string fields = FormatFields({{"label", "\x1b]0;title\x07"}});
  EXPECT_EQ(fields.find_first_of("\x1b\x07"), std::string::npos) << fields;
  std::string section = FormatOutputSection("stdout", "one\x1b[31m\ntwo", false);
  EXPECT_EQ(section, "stdout:\n  one\\x1b[31m\n  two\n");
  std::string error = FormatErrorLine(Conflict("file \x1b[2Jname"));
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
}

}  // namespace
}  // namespace adapt::cli
