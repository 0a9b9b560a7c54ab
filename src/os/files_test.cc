#include "os/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "os/temp_dir.h"

namespace adapt::os {
namespace {

class FilesTest : public testing::Test {
 protected:
  static int ModeOf(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return -1;
    return static_cast<int>(st.st_mode & 07777);
  }

  os::TempDir tmp_{"files-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(FilesTest, WriteFileAtomicWritesContentWithTheGivenMode) {
  std::string path = dir_ + "/state.json";
  // A restrictive umask must not change the mode asked for.
  mode_t old = ::umask(077);
  Status st = WriteFileAtomic(path, "{\"a\":1}", 0644);
  ::umask(old);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(ModeOf(path), 0644);
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "{\"a\":1}");

  ASSERT_TRUE(WriteFileAtomic(dir_ + "/key", "secret", 0600).ok());
  EXPECT_EQ(ModeOf(dir_ + "/key"), 0600);
}

TEST_F(FilesTest, ConcurrentWritersOfOnePathEachPutWholeContentInPlace) {
  // Two organizations pulling one image wrote its blobs through one temporary name: one's
  // truncation cut the other's bytes and the second rename failed ("No such file").
  std::string path = dir_ + "/blob";
  std::vector<std::string> contents;
  for (char c : std::string("abcdefgh")) contents.push_back(std::string(64 << 10, c));
  std::atomic<int> failed{0};
  std::vector<std::thread> writers;
  for (const auto& content : contents)
    writers.emplace_back([&, content] {
      for (int i = 0; i < 50; ++i)
        if (!WriteFileAtomic(path, content).ok()) ++failed;
    });
  for (auto& t : writers) t.join();
  EXPECT_EQ(failed, 0);
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(std::find(contents.begin(), contents.end(), *text), contents.end());
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"blob"});
}

TEST_F(FilesTest, AFailedWriteLeavesNoTemporaryFile) {
  std::string path = dir_ + "/sub";
  ASSERT_TRUE(MakeDirs(path + "/inner").ok());
  // The rename onto a non-empty directory fails after the temporary file was written.
  EXPECT_FALSE(WriteFileAtomic(path, "x").ok());
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"sub"});
}

TEST_F(FilesTest, WriteFileAtomicReplacesAndLeavesNoTemporaryFile) {
  std::string path = dir_ + "/f";
  ASSERT_TRUE(WriteFileAtomic(path, std::string(100000, 'x')).ok());
  ASSERT_TRUE(WriteFileAtomic(path, "short").ok());
  EXPECT_EQ(*ReadFile(path), "short");
  EXPECT_EQ(ListDir(dir_), std::vector<std::string>{"f"});
}

TEST_F(FilesTest, WriteFileAtomicKeepsBinaryBytes) {
  std::string data("a\0b\xff\n", 5);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/bin", data).ok());
  EXPECT_EQ(*ReadFile(dir_ + "/bin"), data);
}

TEST_F(FilesTest, WriteFileAtomicIntoAMissingDirectoryFails) {
  Status st = WriteFileAtomic(dir_ + "/no/such/dir/f", "x");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kNotFound);
}

TEST_F(FilesTest, ReadFileOfAMissingFileIsNotFound) {
  auto r = ReadFile(dir_ + "/missing");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find(dir_ + "/missing"), std::string::npos)
      << r.status().message();
}

TEST_F(FilesTest, ReadFileReadsMoreThanOneBuffer) {
  std::string big(300000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/big", big).ok());
  EXPECT_EQ(*ReadFile(dir_ + "/big"), big);
}

TEST_F(FilesTest, ListDirNamesEntriesWithoutDots) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/a", "").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/.hidden", "").ok());
  ASSERT_TRUE(MakeDirs(dir_ + "/sub/deeper").ok());
  auto names = ListDir(dir_);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".hidden", "a", "sub"}));
}

TEST_F(FilesTest, ListDirOfAMissingDirectoryIsEmpty) {
  EXPECT_TRUE(ListDir(dir_ + "/missing").empty());
}

TEST_F(FilesTest, TreeBytesAddsUpTheFilesBelowADirectory) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/a", std::string(1000, 'a')).ok());
  ASSERT_TRUE(MakeDirs(dir_ + "/sub/deeper").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/sub/deeper/b", std::string(24, 'b')).ok());
  EXPECT_EQ(TreeBytes(dir_), 1024u);
  EXPECT_EQ(TreeBytes(dir_ + "/sub"), 24u);
  EXPECT_EQ(TreeBytes(dir_ + "/missing"), 0u);
}

TEST_F(FilesTest, MakeDirsCreatesParentsWithModeAndIsIdempotent) {
  std::string path = dir_ + "/x/y/z";
  ASSERT_TRUE(MakeDirs(path, 0700).ok());
  EXPECT_EQ(ModeOf(path), 0700);
  EXPECT_TRUE(MakeDirs(path, 0700).ok());
  EXPECT_TRUE(Exists(path));
}

TEST_F(FilesTest, RemoveTreeRemovesEverythingAndToleratesMissing) {
  ASSERT_TRUE(MakeDirs(dir_ + "/t/a/b").ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/t/a/b/f", "x").ok());
  ASSERT_TRUE(RemoveTree(dir_ + "/t").ok());
  EXPECT_FALSE(Exists(dir_ + "/t"));
  EXPECT_TRUE(RemoveTree(dir_ + "/t").ok());
}

TEST_F(FilesTest, ExistsSeesDanglingSymlinks) {
  std::filesystem::create_symlink(dir_ + "/nowhere", dir_ + "/link");
  EXPECT_TRUE(Exists(dir_ + "/link"));
  EXPECT_FALSE(Exists(dir_ + "/nowhere"));
}

TEST_F(FilesTest, CreateSparseFileHasTheSizeButNoBlocks) {
  std::string path = dir_ + "/disk.img";
  const uint64_t size = 3ull * 1024 * 1024 * 1024 + 5;  // past 32 bits
  ASSERT_TRUE(CreateSparseFile(path, size).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), size);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, 1024u * 1024u) << "the file is not sparse";
}

TEST_F(FilesTest, CreateSparseFileTruncatesAnExistingFile) {
  std::string path = dir_ + "/disk.img";
  ASSERT_TRUE(WriteFileAtomic(path, "old content").ok());
  ASSERT_TRUE(CreateSparseFile(path, 4096).ok());
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, std::string(4096, '\0'));
}

TEST_F(FilesTest, HardLinkReplacingGivesTheFileASecondNameOverAnOldFile) {
  std::string a = dir_ + "/a", b = dir_ + "/b";
  ASSERT_TRUE(WriteFileAtomic(a, "new", 0755).ok());
  ASSERT_TRUE(WriteFileAtomic(b, "old", 0644).ok());
  EXPECT_FALSE(SameFile(a, b));
  Status st = HardLinkReplacing(a, b);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(SameFile(a, b));
  EXPECT_EQ(*ReadFile(b), "new");
  EXPECT_EQ(ListDir(dir_), (std::vector<std::string>{"a", "b"}));
}

TEST_F(FilesTest, HardLinkReplacingOfAMissingFileFailsAndKeepsTheTarget) {
  std::string b = dir_ + "/b";
  ASSERT_TRUE(WriteFileAtomic(b, "old", 0644).ok());
  Status st = HardLinkReplacing(dir_ + "/missing", b);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing"), std::string::npos) << st.message();
  EXPECT_EQ(*ReadFile(b), "old");
  EXPECT_EQ(ListDir(dir_), (std::vector<std::string>{"b"}));
}

TEST_F(FilesTest, SameFileIsFalseForACopyAndForAMissingFile) {
  std::string a = dir_ + "/a", b = dir_ + "/b";
  ASSERT_TRUE(WriteFileAtomic(a, "x", 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(b, "x", 0644).ok());
  EXPECT_TRUE(SameFile(a, a));
  EXPECT_FALSE(SameFile(a, b));
  EXPECT_FALSE(SameFile(a, dir_ + "/missing"));
}

}  // namespace
}  // namespace adapt::os
