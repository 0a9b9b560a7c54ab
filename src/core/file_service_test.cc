#include "core/file_service.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

TEST(FilePaths, ValidatesLengthAndNul) {
  EXPECT_TRUE(ValidateFilePath("/tmp/x").ok());
  EXPECT_TRUE(ValidateFilePath("relative/x").ok());
  EXPECT_TRUE(ValidateFilePath(std::string(kMaxPathBytes, 'a')).ok());
  Status empty = ValidateFilePath("");
  EXPECT_EQ(empty.code(), Code::kInvalidArgument);
  EXPECT_EQ(empty.field(), "path");
  EXPECT_EQ(ValidateFilePath(std::string(kMaxPathBytes + 1, 'a')).code(), Code::kInvalidArgument);
  EXPECT_EQ(ValidateFilePath(std::string("a\0b", 3)).code(), Code::kInvalidArgument);
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
  EXPECT_NE(FileErrorFor(1, "").message().find("exit 1"), std::string::npos);
}

}  // namespace
}  // namespace adapt::core
