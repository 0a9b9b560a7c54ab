#include "os/file_in_root.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "os/temp_dir.h"

namespace adapt::os {
namespace {

class FileInRootTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_ + "/root";
    std::filesystem::create_directories(root_ + "/etc");
    // A file beside the root that a "../" escape would reach.
    Write(dir_ + "/outside", "host secret\n");
  }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  void Link(const std::string& target, const std::string& name) {
    ASSERT_EQ(::symlink(target.c_str(), (root_ + "/" + name).c_str()), 0) << name;
  }

  os::TempDir tmp_{"in-root-test"};
  const std::string dir_ = tmp_.path();
  std::string root_;
};

TEST_F(FileInRootTest, ReadsARegularFile) {
  Write(root_ + "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
  auto text = ReadFileInRoot(root_, "/etc/passwd", 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "root:x:0:0:root:/root:/bin/sh\n");
  EXPECT_TRUE(RegularFileInRoot(root_, "etc/passwd"));
}

TEST_F(FileInRootTest, AnAbsoluteSymlinkResolvesInsideTheRoot) {
  Write(root_ + "/etc/real", "inside\n");
  Link("/etc/real", "etc/passwd");
  auto text = ReadFileInRoot(root_, "/etc/passwd", 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "inside\n");
}

TEST_F(FileInRootTest, ASymlinkToTheHostsShadowFileIsNotFollowedOutOfTheRoot) {
  ASSERT_TRUE(std::filesystem::exists("/etc/shadow"));
  Link("/etc/shadow", "etc/passwd");
  auto text = ReadFileInRoot(root_, "/etc/passwd", 1 << 20);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kNotFound) << text.status().message();
  EXPECT_FALSE(RegularFileInRoot(root_, "/etc/passwd"));
}

TEST_F(FileInRootTest, DotDotStopsAtTheRoot) {
  Link("../../outside", "etc/passwd");
  EXPECT_EQ(ReadFileInRoot(root_, "/etc/passwd", 1 << 20).status().code(), Code::kNotFound);
  EXPECT_EQ(ReadFileInRoot(root_, "../outside", 1 << 20).status().code(), Code::kNotFound);
  // "/outside" inside the root is the root's own, once there is one.
  Write(root_ + "/outside", "mine\n");
  EXPECT_EQ(*ReadFileInRoot(root_, "/etc/passwd", 1 << 20), "mine\n");
}

TEST_F(FileInRootTest, ASymlinkToDevZeroIsRefusedNotReadForever) {
  Link("/dev/zero", "etc/passwd");
  EXPECT_EQ(ReadFileInRoot(root_, "/etc/passwd", 1 << 20).status().code(), Code::kNotFound);
  // Even a device inside the root is not read: only regular files are.
  std::filesystem::create_directories(root_ + "/dev");
  ASSERT_EQ(::mknod((root_ + "/dev/zero").c_str(), S_IFCHR | 0666, makedev(1, 5)), 0);
  auto text = ReadFileInRoot(root_, "/etc/passwd", 1 << 20);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kInvalidArgument);
  EXPECT_NE(text.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(FileInRootTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo((root_ + "/etc/passwd").c_str(), 0644), 0);
  auto text = ReadFileInRoot(root_, "/etc/passwd", 1 << 20);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(RegularFileInRoot(root_, "/etc/passwd"));
}

TEST_F(FileInRootTest, AFileOverTheLimitIsRefused) {
  Write(root_ + "/etc/passwd", std::string(4097, 'x'));
  auto text = ReadFileInRoot(root_, "/etc/passwd", 4096);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kPayloadTooLarge);
  EXPECT_TRUE(ReadFileInRoot(root_, "/etc/passwd", 4097).ok());
}

TEST_F(FileInRootTest, ADirectoryIsNotAFile) {
  EXPECT_EQ(ReadFileInRoot(root_, "/etc", 1 << 20).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ReadFileInRoot(root_, "/etc/missing", 1 << 20).status().code(), Code::kNotFound);
}

TEST_F(FileInRootTest, AClientIsToldThePathInTheRootNotWhereTheRootIs) {
  Write(root_ + "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
  for (const Status& st : {ReadFileInRoot(root_, "/etc/missing", 1 << 20).status(),
                           ReadFileInRoot(root_, "/etc", 1 << 20).status(),
                           ReadFileInRoot(root_, "/etc/passwd", 1).status()}) {
    EXPECT_NE(st.message().find(root_), std::string::npos) << st.message();
    EXPECT_EQ(st.client_message().find(root_), std::string::npos) << st.client_message();
    EXPECT_EQ(st.client_message().rfind("/etc", 0), 0u) << st.client_message();
  }
}

TEST_F(FileInRootTest, MakeDirsMakesMissingDirectoriesWithTheMode) {
  ASSERT_TRUE(MakeDirsInRoot(root_, "/workspace/a/b", 0777).ok());
  struct stat st {};
  ASSERT_EQ(::stat((root_ + "/workspace/a/b").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0777u);
  EXPECT_TRUE(MakeDirsInRoot(root_, "/workspace/a/b", 0777).ok()) << "there already";
}

TEST_F(FileInRootTest, MakeDirsFollowsLinksOnlyInsideTheRoot) {
  // Absolute and "../" links name paths inside the root.
  Link("/etc", "abs");
  Link("../../../../etc", "rel");
  ASSERT_TRUE(MakeDirsInRoot(root_, "/abs/x", 0755).ok());
  ASSERT_TRUE(MakeDirsInRoot(root_, "/rel/y", 0755).ok());
  EXPECT_TRUE(std::filesystem::is_directory(root_ + "/etc/x"));
  EXPECT_TRUE(std::filesystem::is_directory(root_ + "/etc/y"));
  // A link to the host's directory (which the root does not have) makes nothing there.
  Link(dir_, "host");
  EXPECT_FALSE(MakeDirsInRoot(root_, "/host/z", 0755).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/z"));
}

TEST_F(FileInRootTest, APlainDirectoryHasNoLinkOnItsWay) {
  std::filesystem::create_directories(root_ + "/var/lib/dpkg");
  EXPECT_TRUE(PlainDirectoryInRoot(root_, "/var/lib/dpkg"));
  EXPECT_FALSE(PlainDirectoryInRoot(root_, "/var/lib/rpm"));
  Write(root_ + "/var/lib/file", "x");
  EXPECT_FALSE(PlainDirectoryInRoot(root_, "/var/lib/file"));
  // A link, even one to a directory inside the root, would make root + path another place.
  Link("/etc", "link");
  EXPECT_FALSE(PlainDirectoryInRoot(root_, "/link"));
  std::filesystem::create_directories(root_ + "/lib");
  Link("/var/lib", "lib/apk");
  EXPECT_FALSE(PlainDirectoryInRoot(root_, "/lib/apk/dpkg"));
}

TEST_F(FileInRootTest, MakeDirsRefusesADanglingLinkAndAFile) {
  Link(dir_ + "/nowhere/x", "workspace");
  Status st = MakeDirsInRoot(root_, "/workspace", 0777);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.message();
  EXPECT_NE(st.message().find("/workspace"), std::string::npos) << st.message();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/nowhere"));
  Write(root_ + "/file", "x");
  EXPECT_FALSE(MakeDirsInRoot(root_, "/file/sub", 0755).ok());
}

}  // namespace
}  // namespace adapt::os
