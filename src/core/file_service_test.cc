#include "core/file_service.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace adapt::core {
namespace {

TEST(FilePaths, ValidatesLengthAndNul) {
  EXPECT_TRUE(ValidateFilePath("/tmp/x").ok());
  EXPECT_TRUE(ValidateFilePath("relative/x").ok());
  // The longest path: names of 255 bytes (Linux's NAME_MAX), each after a '/'.
  std::string longest;
  while (longest.size() < kMaxPathBytes)
    longest += "/" + std::string(std::min<size_t>(255, kMaxPathBytes - longest.size() - 1), 'a');
  ASSERT_EQ(longest.size(), kMaxPathBytes);
  EXPECT_TRUE(ValidateFilePath(longest).ok());
  Status empty = ValidateFilePath("");
  EXPECT_EQ(empty.code(), Code::kInvalidArgument);
  EXPECT_EQ(empty.field(), "path");
  EXPECT_EQ(ValidateFilePath(longest + "a").code(), Code::kInvalidArgument);
  EXPECT_EQ(ValidateFilePath(std::string("a\0b", 3)).code(), Code::kInvalidArgument);
  // One name past NAME_MAX is a 400 here, not a failed walk (a 500 on a volume's host side).
  EXPECT_TRUE(ValidateFilePath("/w/" + std::string(255, 'n') + "/x").ok());
  Status name = ValidateFilePath("/w/" + std::string(256, 'n') + "/x");
  EXPECT_EQ(name.code(), Code::kInvalidArgument);
  EXPECT_EQ(name.message(), "path has a name longer than 255 bytes");
}

TEST(FileErrors, AgentExitCodesBecomeApiErrors) {
  Status st = FileErrorFor(3, "adapt-agent: cannot open /x: no such file or directory\n");
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_EQ(st.message(), "cannot open /x: no such file or directory");
  EXPECT_EQ(FileErrorFor(4, "adapt-agent: /tmp is a directory").code(), Code::kInvalidArgument);
  EXPECT_EQ(FileErrorFor(5, "").code(), Code::kPermissionDenied);
  EXPECT_EQ(FileErrorFor(6, "").code(), Code::kConflict);
  EXPECT_EQ(FileErrorFor(7, "").code(), Code::kPayloadTooLarge);
  EXPECT_EQ(FileErrorFor(8, "").code(), Code::kInvalidArgument);
  EXPECT_EQ(FileErrorFor(9, "").field(), "body");
  EXPECT_EQ(FileErrorFor(10, "").code(), Code::kResourceExhausted);
  // runsc's own failures (the sandbox went away) keep their last line.
  Status other = FileErrorFor(128, "some noise\nrunsc: container is stopped\n");
  EXPECT_EQ(other.code(), Code::kInternal);
  EXPECT_EQ(other.message(), "file operation failed: runsc: container is stopped");
  // A failure inside the sandbox (exit 1: an I/O error there) is the sandbox's state, not a
  // fault of adaptd's; adaptd's own misuse of the tool (exit 2) is.
  EXPECT_EQ(FileErrorFor(1, "").code(), Code::kConflict);
  EXPECT_NE(FileErrorFor(1, "").message().find("exit 1"), std::string::npos);
  Status io = FileErrorFor(1, "adapt-agent: cannot read /x: input/output error\n");
  EXPECT_EQ(io.code(), Code::kConflict);
  EXPECT_EQ(io.message(),
            "the file operation failed inside the sandbox: cannot read /x: input/output error");
  EXPECT_EQ(FileErrorFor(2, "").code(), Code::kInternal);
  Status killed = FileSignalError(9);
  EXPECT_EQ(killed.code(), Code::kConflict);
  EXPECT_NE(killed.message().find("killed by signal 9"), std::string::npos);
}

TEST(FileReplies, AgentEntriesBecomeTypedEntries) {
  auto items = ParseListReply(
      R"([{"name":"a.txt","type":"file","size":12,"mode":"0644","mtime":"2026-01-02T03:04:05Z"},)"
      R"({"name":"l","type":"symlink","size":3,"mode":"0777","mtime":"2026-01-02T03:04:05Z",)"
      R"("linkTarget":"a.txt"}])");
  ASSERT_TRUE(items.ok()) << items.status().message();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].name, "a.txt");
  EXPECT_EQ((*items)[0].size, 12);
  EXPECT_EQ((*items)[0].mode, "0644");
  EXPECT_FALSE((*items)[0].link_target.has_value());
  EXPECT_EQ((*items)[1].link_target, "a.txt");
  auto stat = ParseStatReply(
      R"({"name":"d","type":"dir","size":4096,"mode":"0755","mtime":"2026-01-02T03:04:05Z"})");
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->type, "dir");
}

// What the tool checks is checked again: its reply comes from the sandbox's root.
TEST(FileReplies, ATextReplyIsHeldToWhatReadTextAskedFor) {
  auto text = CheckReadTextReply("h\xc3\xa9llo\n", 7);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "h\xc3\xa9llo\n");
  EXPECT_TRUE(CheckReadTextReply("", 0).ok());
  for (std::string bad : {std::string("eight by"), std::string("a\0b", 3), std::string("\xff")})
    EXPECT_EQ(CheckReadTextReply(bad, 7).status().code(), Code::kConflict) << bad;
}

TEST(FileReplies, AnythingElseIsAMalformedReply) {
  for (const char* reply :
       {"", "nope", "{}", R"({"name":"a"})", R"([{"name":1}])",
        R"({"name":"a","type":"file","size":"12","mode":"0644","mtime":"x"})",
        R"({"name":"a","type":"file","size":1,"mode":"0644","mtime":"x","linkTarget":5})"}) {
    auto stat = ParseStatReply(reply);
    auto list = ParseListReply(std::string("[") + reply + "]");
    EXPECT_EQ(stat.status().code(), Code::kConflict) << reply;
    if (std::string(reply) != "") {
      EXPECT_EQ(list.status().code(), Code::kConflict) << reply;
    }
  }
  EXPECT_EQ(ParseListReply("{}").status().code(), Code::kConflict);
  // A stat reply is one entry: one padded past 64 KiB is not parsed.
  auto padded = [](size_t n) {
    return R"({"name":"a","type":"file","size":1,"mode":"0644","mtime":"x","pad":")" +
           std::string(n, 'x') + "\"}";
  };
  EXPECT_TRUE(ParseStatReply(padded(60000)).ok());
  EXPECT_EQ(ParseStatReply(padded(70000)).status().code(), Code::kConflict);
  EXPECT_NE(ParseListReply("{}").status().message().find("a reply adaptd cannot read"),
            std::string::npos);
  EXPECT_TRUE(ParseListReply("[]").ok());
}

TEST(FileReplies, TheDownloadHeaderCarriesTheOpenedPathOnlyWhenAskedFor) {
  auto plain = ParseDownloadHeader("12", ReportOpenedPath::kNo);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->size, 12u);
  EXPECT_EQ(plain->opened_path, "");
  // "/etc/shadow" in hex.
  auto opened = ParseDownloadHeader("7 2f6574632f736861646f77", ReportOpenedPath::kYes);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->size, 7u);
  EXPECT_EQ(opened->opened_path, "/etc/shadow");
  // The sandbox's text: a path missing where it was asked for, or not absolute, or not hex,
  // is not believed.
  for (const char* line : {"7 ", "7 zz", "7 6574632f", "7 2f00", "x 2f", " 2f", ""})
    EXPECT_EQ(ParseDownloadHeader(line, ReportOpenedPath::kYes).status().code(), Code::kConflict)
        << line;
  EXPECT_EQ(ParseDownloadHeader("7 2f", ReportOpenedPath::kNo).status().code(), Code::kConflict);
  // A size alone where the path was asked for: a file tool older than the flag, told clearly.
  auto old_tool = ParseDownloadHeader("7", ReportOpenedPath::kYes);
  EXPECT_EQ(old_tool.status().code(), Code::kUnsupported);
  EXPECT_EQ(old_tool.status().field(), "workspace_path");
}

}  // namespace
}  // namespace adapt::core
