#include "os/file_in_root.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace adapt::os {
namespace {

class FileInRootTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/adapt-file-in-root-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    root_ = dir_ + "/root";
    std::filesystem::create_directories(root_ + "/etc");
    std::ofstream(dir_ + "/host-secret") << "host\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, root_;
};

TEST_F(FileInRootTest, ReadsARegularFile) {
  std::ofstream(root_ + "/etc/list") << "/lib/a.so\n";
  auto r = ReadFileInRoot(root_, "/etc/list", 1024);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "/lib/a.so\n");
}

TEST_F(FileInRootTest, AbsentIsNotFound) {
  auto r = ReadFileInRoot(root_, "/etc/list", 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

TEST_F(FileInRootTest, SymlinksResolveInsideTheRootNeverToTheHost) {
  std::filesystem::create_symlink(dir_ + "/host-secret", root_ + "/etc/absolute");
  std::filesystem::create_symlink("../../host-secret", root_ + "/etc/relative");
  std::filesystem::create_symlink(dir_, root_ + "/up");
  for (const char* path : {"/etc/absolute", "/etc/relative", "/up/host-secret"}) {
    auto r = ReadFileInRoot(root_, path, 1024);
    EXPECT_FALSE(r.ok()) << path << " read the host's file: " << *r;
  }
}

TEST_F(FileInRootTest, AFifoOrADirectoryIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ + "/etc/fifo").c_str(), 0644), 0);
  EXPECT_FALSE(ReadFileInRoot(root_, "/etc/fifo", 1024).ok());
  EXPECT_FALSE(ReadFileInRoot(root_, "/etc", 1024).ok());
}

TEST_F(FileInRootTest, ALargerFileThanAllowedIsRefused) {
  std::ofstream(root_ + "/etc/big") << std::string(5000, 'x');
  EXPECT_FALSE(ReadFileInRoot(root_, "/etc/big", 4096).ok());
  EXPECT_TRUE(ReadFileInRoot(root_, "/etc/big", 5000).ok());
}

}  // namespace
}  // namespace adapt::os
