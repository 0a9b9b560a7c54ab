#include "os/durable_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::os {
namespace {

class DurableFileTest : public testing::Test {
 protected:
  os::TempDir tmp_{"durable-file-test"};
  const std::string dir_ = tmp_.path();
};

// Writes of odd sizes that cross the writeback windows (several MiB each) in every way: one
// write inside a window, one ending exactly on a boundary, one spanning several.
TEST_F(DurableFileTest, ABlobWrittenAcrossWritebackWindowsReadsBackWhole) {
  std::string expected;
  auto writer = DurableFileWriter::Create(dir_ + "/blob");
  ASSERT_TRUE(writer.ok());
  const size_t sizes[] = {1, (3u << 20) + 17, (5u << 20) - 18, 8u << 20, (19u << 20) + 3, 4096};
  unsigned char next = 0;
  for (size_t size : sizes) {
    std::string piece(size, '\0');
    for (char& c : piece) c = static_cast<char>(next++ * 7 + 3);
    ASSERT_TRUE((*writer)->Write(piece.data(), piece.size()).ok());
    expected += piece;
  }
  EXPECT_EQ((*writer)->written(), expected.size());
  EXPECT_FALSE(Exists(dir_ + "/blob"));  // not before Commit
  ASSERT_TRUE((*writer)->Commit().ok());
  auto text = ReadFile(dir_ + "/blob");
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(*text == expected);
  EXPECT_EQ(ListDir(dir_).size(), 1u);  // no temporary file left
}

TEST_F(DurableFileTest, AnUncommittedBlobLeavesNothing) {
  {
    auto writer = DurableFileWriter::Create(dir_ + "/blob");
    ASSERT_TRUE(writer.ok());
    std::string piece(9u << 20, 'x');
    ASSERT_TRUE((*writer)->Write(piece.data(), piece.size()).ok());
  }
  EXPECT_TRUE(ListDir(dir_).empty());
}

}  // namespace
}  // namespace adapt::os
