#include "os/sparse_copy.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::os {
namespace {

constexpr off_t kSize = 64 << 20;

class SparseCopyTest : public testing::Test {
 protected:
  // A 64 MiB file holding two small runs of data, holes elsewhere.
  void WriteSparse(const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, kSize), 0);
    ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
    ASSERT_EQ(::pwrite(fd, "middle", 6, 32 << 20), 6);
    ::close(fd);
  }

  TempDir tmp_{"sparse-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(SparseCopyTest, TheCopyHasTheSameBytesAndKeepsTheHoles) {
  WriteSparse(dir_ + "/disk.img");
  ASSERT_TRUE(CopySparseFile(dir_ + "/disk.img", dir_ + "/copy.img").ok());
  auto original = ReadFile(dir_ + "/disk.img");
  auto copy = ReadFile(dir_ + "/copy.img");
  ASSERT_TRUE(original.ok() && copy.ok());
  EXPECT_EQ(copy->size(), static_cast<size_t>(kSize));
  EXPECT_TRUE(*original == *copy);
  EXPECT_EQ(copy->substr(32 << 20, 6), "middle");
  // Allocated, not apparent: a few blocks of the 64 MiB.
  EXPECT_LT(AllocatedBytes(dir_ + "/copy.img"), 1u << 20);
  EXPECT_GT(AllocatedBytes(dir_ + "/copy.img"), 0u);
  EXPECT_EQ(AllocatedBytes(dir_), AllocatedBytes(dir_ + "/copy.img") * 2);
}

// /dev/shm is a tmpfs, /tmp another filesystem here: copy_file_range answers EXDEV between
// them on current kernels, and the copy goes through a buffer instead.
TEST_F(SparseCopyTest, ACopyToAnotherFilesystemHasTheSameBytesAndKeepsTheHoles) {
  std::optional<TempDir> shm(std::in_place, "sparse-test", "/dev/shm");
  const std::string other = shm->path();
  WriteSparse(dir_ + "/disk.img");
  Status st = CopySparseFile(dir_ + "/disk.img", other + "/copy.img");
  auto copy = ReadFile(other + "/copy.img");
  uint64_t allocated = AllocatedBytes(other + "/copy.img");
  shm.reset();  // the copy's 64 MiB leave the tmpfs before the checks
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->size(), static_cast<size_t>(kSize));
  EXPECT_EQ(copy->substr(0, 4), "head");
  EXPECT_EQ(copy->substr(32 << 20, 6), "middle");
  EXPECT_LT(allocated, 4u << 20);
}

TEST_F(SparseCopyTest, AMissingSourceIsAnErrorNamingIt) {
  Status st = CopySparseFile(dir_ + "/absent.img", dir_ + "/copy.img");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("absent.img"), std::string::npos);
  EXPECT_EQ(AllocatedBytes(dir_ + "/absent.img"), 0u);
}

}  // namespace
}  // namespace adapt::os
