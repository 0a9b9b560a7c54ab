#include "os/tree_copy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>

#include "os/files.h"

namespace adapt::os {
namespace {

template <typename R>
std::string CopiedText(const R& r) {
  return r.ok() ? *r : "error: " + r.status().message();
}

namespace fs = std::filesystem;

class TreeCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("adapt-tree-copy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "from");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

TEST_F(TreeCopyTest, KeepsWhiteoutsOpaqueDirectoriesModesAndLinksWithoutFollowingThem) {
  ASSERT_TRUE(WriteFileAtomic(Path("from/file"), "hello", 04755).ok());
  ASSERT_TRUE(MakeWhiteout(Path("from/deleted")).ok());
  ASSERT_TRUE(MakeDirs(Path("from/replaced"), 0750).ok());
  ASSERT_TRUE(SetXattr(Path("from/replaced"), "trusted.overlay.opaque", "y").ok());
  ASSERT_TRUE(WriteFileAtomic(Path("big"), std::string(1 << 20, 'x')).ok());
  fs::create_symlink(Path("big"), Path("from/link"));

  ASSERT_TRUE(CopyTreeExactly(Path("from"), Path("to")).ok());

  struct stat st;
  ASSERT_EQ(::lstat(Path("to/deleted").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, 0u);
  char value[4] = {};
  EXPECT_EQ(::lgetxattr(Path("to/replaced").c_str(), "trusted.overlay.opaque", value, 3), 1);
  EXPECT_EQ(value[0], 'y');
  ASSERT_EQ(::lstat(Path("to/file").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 04755u);
  EXPECT_EQ(CopiedText(ReadFile(Path("to/file"))), "hello");
  ASSERT_EQ(::lstat(Path("to/link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(fs::read_symlink(Path("to/link")).string(), Path("big"));
  // The link's 1 MiB target is not the tree's.
  EXPECT_EQ(TreeBytesNoFollow(Path("to")), 5u);
}

TEST_F(TreeCopyTest, AMissingSourceIsAnErrorAndMakesNothing) {
  Status st = CopyTreeExactly(Path("absent"), Path("other"));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("copying"), std::string::npos) << st.message();
  EXPECT_FALSE(Exists(Path("other")));
}

}  // namespace
}  // namespace adapt::os
