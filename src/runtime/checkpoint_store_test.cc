// Real mounts: needs root, /dev/loop-control, mkfs.ext4 and a kernel with fscrypt.
#include "runtime/checkpoint_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "os/files.h"
#include "os/mount.h"
#include "os/temp_dir.h"

namespace adapt::runtime {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The bytes of `image` that hold data (it is sparse, as large as the host's disk), read range
// by range with SEEK_DATA/SEEK_HOLE.
std::string AllocatedBytesOf(const std::string& image) {
  std::string out;
  int fd = ::open(image.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  off_t at = 0;
  std::string buf(1 << 20, '\0');
  while ((at = ::lseek(fd, at, SEEK_DATA)) >= 0) {
    off_t end = ::lseek(fd, at, SEEK_HOLE);
    if (end <= at) break;
    for (off_t pos = at; pos < end;) {
      ssize_t n = ::pread(fd, buf.data(), std::min<off_t>(buf.size(), end - pos), pos);
      if (n <= 0) break;
      out.append(buf, 0, static_cast<size_t>(n));
      pos += n;
    }
    at = end;
  }
  ::close(fd);
  return out;
}

class CheckpointStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "checkpoint_store_test mounts for real and must run as root";
    paths_ = CheckpointStoreAt(dir_);
    auto key = DeriveCheckpointStoreKey(std::string(32, 'm'));
    ASSERT_TRUE(key.ok()) << key.status().message();
    key_ = *key;
  }

  void TearDown() override {
    for (const auto& m : os::MountsUnder(dir_)) (void)os::Unmount(m);  // best effort: teardown
  }

  os::TempDir tmp_{"checkpoint-store-test"};
  const std::string dir_ = tmp_.path();
  CheckpointStorePaths paths_;
  std::string key_;
};

TEST_F(CheckpointStoreTest, WhatIsWrittenThroughTheStoreIsCiphertextInItsImage) {
  Status st = OpenCheckpointStore(paths_, key_);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(os::IsMountPoint(paths_.mount));
  // A marker that does not compress away, written and read back through the mount.
  std::string marker;
  for (int i = 0; i < 4096; ++i) marker += "adapt-secret-" + std::to_string(i * 7919) + ";";
  ASSERT_TRUE(os::WriteFileAtomic(paths_.root + "/memory.img", marker, 0600).ok());
  EXPECT_EQ(Slurp(paths_.root + "/memory.img"), marker);
  // The same beside `root`, where nothing is encrypted: the raw read below must find this
  // one, or it proves nothing about the other.
  std::string plain = marker;
  for (size_t at = 0; (at = plain.find("secret", at)) != std::string::npos;) plain[at] = 'S';
  ASSERT_TRUE(os::WriteFileAtomic(paths_.mount + "/plain.img", plain, 0600).ok());
  ASSERT_TRUE(CloseCheckpointStore(paths_).ok());
  EXPECT_FALSE(os::IsMountPoint(paths_.mount));
  std::string raw = AllocatedBytesOf(paths_.image);
  EXPECT_NE(raw.find("adapt-Secret-"), std::string::npos);
  EXPECT_EQ(raw.find("adapt-secret-"), std::string::npos);
  // The file names are encrypted too.
  EXPECT_EQ(raw.find("memory.img"), std::string::npos);

  // Opened again with the same key, the file is there.
  st = OpenCheckpointStore(paths_, key_);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Slurp(paths_.root + "/memory.img"), marker);
}

TEST_F(CheckpointStoreTest, AnotherMasterKeyIsRefusedAndChangesNothing) {
  ASSERT_TRUE(OpenCheckpointStore(paths_, key_).ok());
  ASSERT_TRUE(os::WriteFileAtomic(paths_.root + "/image", "saved", 0600).ok());
  ASSERT_TRUE(CloseCheckpointStore(paths_).ok());
  auto other = DeriveCheckpointStoreKey(std::string(32, 'o'));
  ASSERT_TRUE(other.ok());
  ASSERT_NE(*other, key_);
  Status st = OpenCheckpointStore(paths_, *other);
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_NE(st.message().find("another storage master key"), std::string::npos) << st.message();
  ASSERT_TRUE(CloseCheckpointStore(paths_).ok());
  ASSERT_TRUE(OpenCheckpointStore(paths_, key_).ok());
  EXPECT_EQ(Slurp(paths_.root + "/image"), "saved");
}

TEST_F(CheckpointStoreTest, APlaintextDirectoryIsMovedInAndItsOldCopyRemoved) {
  ASSERT_TRUE(OpenCheckpointStore(paths_, key_).ok());
  std::string old = dir_ + "/old-checkpoint";
  ASSERT_TRUE(os::MakeDirs(old, 0700).ok());
  ASSERT_TRUE(os::WriteFileAtomic(old + "/checkpoint.img", "memory", 0600).ok());
  std::string to = paths_.root + "/sandboxes/sbx_x/checkpoint";
  // A copy a crash cut short is started again.
  ASSERT_TRUE(os::MakeDirs(to + ".moving", 0700).ok());
  ASSERT_TRUE(os::WriteFileAtomic(to + ".moving/half", "x", 0600).ok());
  Status st = MoveIntoCheckpointStore(old, to);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(os::Exists(old));
  EXPECT_FALSE(os::Exists(to + ".moving"));
  EXPECT_FALSE(os::Exists(to + "/half"));
  EXPECT_EQ(Slurp(to + "/checkpoint.img"), "memory");
  // Nothing left to move is no error, and changes nothing.
  EXPECT_TRUE(MoveIntoCheckpointStore(old, to).ok());
  EXPECT_EQ(Slurp(to + "/checkpoint.img"), "memory");
}

TEST_F(CheckpointStoreTest, KeysDifferByMasterKey) {
  auto a = DeriveCheckpointStoreKey(std::string(32, 'a'));
  auto b = DeriveCheckpointStoreKey(std::string(32, 'b'));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*a, *DeriveCheckpointStoreKey(std::string(32, 'a')));
}

}  // namespace
}  // namespace adapt::runtime
