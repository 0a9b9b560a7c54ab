// Real mounts: needs root, /dev/loop-control, mkfs.ext4 and overlayfs.
#include "os/mount.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "os/files.h"
#include "os/loop_device.h"
#include "os/process.h"
#include "os/temp_dir.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class MountTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "mount_test mounts for real and must run as root";
  }

  void TearDown() override {
    // Whatever a failed test left mounted goes first, deepest first.
    for (const auto& m : MountsUnder(dir_)) (void)Unmount(m);  // best effort: teardown
  }

  // Lines of `losetup -a` that name `image`.
  static std::string LoopLinesFor(const std::string& image) {
    auto r = RunCommand({"losetup", "-a"});
    EXPECT_TRUE(r.ok());
    std::string out;
    if (!r.ok()) return out;
    size_t start = 0;
    while (start < r->output.size()) {
      size_t end = r->output.find('\n', start);
      if (end == std::string::npos) end = r->output.size();
      std::string line = r->output.substr(start, end - start);
      if (line.find(image) != std::string::npos) out += line + "\n";
      start = end + 1;
    }
    return out;
  }

  void MakeExt4(const std::string& image) {
    ASSERT_TRUE(CreateSparseFile(image, 64ull * 1024 * 1024).ok());
    Status st = RunChecked({"mkfs.ext4", "-q", "-F", image});
    ASSERT_TRUE(st.ok()) << st.message();
  }

  os::TempDir tmp_{"mount-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(MountTest, LoopExt4AndOverlayMountWriteListAndUnmountCleanly) {
  const std::string image = dir_ + "/disk.img";
  const std::string disk = dir_ + "/disk";
  ASSERT_NO_FATAL_FAILURE(MakeExt4(image));
  ASSERT_TRUE(MakeDirs(disk).ok());

  Status st = MountLoopExt4(image, disk);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_NE(LoopLinesFor(image), "") << "no loop device backs " << image;
  // This process's mount namespace holds it.
  const std::string me = std::to_string(::getpid()) + " (";
  auto holders = LoopDeviceHolders(image, 100000);
  EXPECT_TRUE(std::any_of(holders.begin(), holders.end(),
                          [&](const std::string& h) { return h.starts_with(me); }))
      << holders.size() << " holders, not this process";

  // The filesystem is really there: ext4 has lost+found, and a file written survives a read.
  EXPECT_TRUE(Exists(disk + "/lost+found"));
  ASSERT_TRUE(WriteFileAtomic(disk + "/hello.txt", "written to ext4").ok());
  EXPECT_EQ(*ReadFile(disk + "/hello.txt"), "written to ext4");
  EXPECT_TRUE(Contains(MountsUnder(dir_), disk));

  // An overlay nested inside the ext4 mount: lower read-only, writes land in upper.
  const std::string lower = dir_ + "/lower";
  const std::string merged = disk + "/merged";
  ASSERT_TRUE(MakeDirs(lower).ok());
  ASSERT_TRUE(WriteFileAtomic(lower + "/from-lower.txt", "image content").ok());
  ASSERT_TRUE(MakeDirs(disk + "/upper").ok());
  ASSERT_TRUE(MakeDirs(disk + "/work").ok());
  ASSERT_TRUE(MakeDirs(merged).ok());
  st = MountOverlay(lower, disk + "/upper", disk + "/work", merged);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(*ReadFile(merged + "/from-lower.txt"), "image content");
  ASSERT_TRUE(WriteFileAtomic(merged + "/new.txt", "sandbox write").ok());
  EXPECT_EQ(*ReadFile(disk + "/upper/new.txt"), "sandbox write");
  EXPECT_FALSE(Exists(lower + "/new.txt"));

  // Deepest first: the overlay must come off before the disk it lives on.
  auto mounts = MountsUnder(dir_);
  ASSERT_EQ(mounts, (std::vector<std::string>{merged, disk}));
  EXPECT_EQ(MountsUnder(disk), mounts);
  EXPECT_TRUE(MountsUnder(dir_ + "/dis").empty()) << "a sibling prefix must not match";

  for (const auto& m : mounts) {
    st = Unmount(m);
    EXPECT_TRUE(st.ok()) << m << ": " << st.message();
  }
  EXPECT_TRUE(MountsUnder(dir_).empty());
  EXPECT_FALSE(Exists(disk + "/hello.txt"));

  // Auto-clear detaches the loop device once the filesystem is gone; give the kernel a moment.
  std::string left;
  for (int i = 0; i < 100; ++i) {
    left = LoopLinesFor(image);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(left, "") << "the loop device was not released";

  // The disk keeps its data for the next mount.
  ASSERT_TRUE(MountLoopExt4(image, disk).ok());
  EXPECT_EQ(*ReadFile(disk + "/hello.txt"), "written to ext4");
  EXPECT_EQ(*ReadFile(disk + "/upper/new.txt"), "sandbox write");
  EXPECT_TRUE(Unmount(disk).ok());
}

TEST_F(MountTest, MountLoopExt4OfAMissingImageFailsAndAttachesNothing) {
  ASSERT_TRUE(MakeDirs(dir_ + "/disk").ok());
  Status st = MountLoopExt4(dir_ + "/missing.img", dir_ + "/disk");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kNotFound);
  EXPECT_TRUE(MountsUnder(dir_).empty());
}

TEST_F(MountTest, MountLoopExt4OfANonExt4FileFailsAndReleasesTheLoopDevice) {
  const std::string image = dir_ + "/blank.img";
  ASSERT_TRUE(CreateSparseFile(image, 8ull * 1024 * 1024).ok());
  ASSERT_TRUE(MakeDirs(dir_ + "/disk").ok());
  EXPECT_FALSE(MountLoopExt4(image, dir_ + "/disk").ok());
  EXPECT_TRUE(MountsUnder(dir_).empty());
  std::string left;
  for (int i = 0; i < 100; ++i) {
    left = LoopLinesFor(image);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(left, "") << "a failed mount left its loop device attached";
}

// A loop device that backs `image` but holds none of its filesystem (4 KiB from 1 MiB in):
// what a start right after a stop can meet, a device on its way out that cannot be mounted.
std::string AttachUnmountable(const std::string& image) {
  auto r = RunCommand(
      {"losetup", "--find", "--show", "--offset", "1048576", "--sizelimit", "4096", image});
  if (!r.ok() || r->status.exit_code != 0) return "";
  std::string dev = r->output;
  while (!dev.empty() && dev.back() == '\n') dev.pop_back();
  return dev;
}

size_t Lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// An ext4 image at dir/disk.img, its mount point dir/disk, and a device that backs the image
// but cannot be mounted (AttachUnmountable); the test detaches that device.
class StaleLoopTest : public MountTest {
 protected:
  void SetUp() override {
    MountTest::SetUp();
    image_ = dir_ + "/disk.img";
    disk_ = dir_ + "/disk";
    ASSERT_NO_FATAL_FAILURE(MakeExt4(image_));
    ASSERT_TRUE(MakeDirs(disk_).ok());
    stale_ = AttachUnmountable(image_);
    ASSERT_NE(stale_, "");
  }
  std::string image_, disk_, stale_;
};

TEST_F(StaleLoopTest, ADeviceOnItsWayOutIsWaitedForThenANewOneIsAttached) {
  std::thread detach([going = stale_] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    (void)RunCommand({"losetup", "-d", going});  // checked below: the mount needs it gone
  });
  Status st = MountLoopExt4(image_, disk_);
  detach.join();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(Exists(disk_ + "/lost+found"));
  std::string lines = LoopLinesFor(image_);
  EXPECT_EQ(Lines(lines), 1u) << lines;
  // The device may have the old one's number again, but not its offset.
  EXPECT_EQ(lines.find("offset"), std::string::npos) << lines;
  EXPECT_TRUE(Unmount(disk_).ok());
}

TEST_F(StaleLoopTest, ADeviceThatStaysIsNeverJoinedByASecondOne) {
  Status st = MountLoopExt4(image_, disk_);
  std::string lines = LoopLinesFor(image_);
  (void)RunCommand({"losetup", "-d", stale_});  // the test's own device
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(stale_), std::string::npos) << st.message();
  EXPECT_TRUE(MountsUnder(dir_).empty());
  // Two devices over one ext4 image would mount it twice and corrupt it.
  EXPECT_EQ(Lines(lines), 1u) << lines;
}

TEST_F(MountTest, MountPointsWithSpacesAreListedUnescaped) {
  const std::string lower = dir_ + "/lower";
  const std::string target = dir_ + "/root fs";
  for (const auto& d : {lower, dir_ + "/upper", dir_ + "/work", target})
    ASSERT_TRUE(MakeDirs(d).ok());
  Status st = MountOverlay(lower, dir_ + "/upper", dir_ + "/work", target);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(MountsUnder(dir_), std::vector<std::string>{target});
  EXPECT_TRUE(Unmount(target).ok());
  EXPECT_TRUE(MountsUnder(dir_).empty());
}

TEST_F(MountTest, UnmountOfABusyMountDetachesIt) {
  const std::string target = dir_ + "/merged";
  for (const auto& d : {dir_ + "/lower", dir_ + "/upper", dir_ + "/work", target})
    ASSERT_TRUE(MakeDirs(d).ok());
  ASSERT_TRUE(MountOverlay(dir_ + "/lower", dir_ + "/upper", dir_ + "/work", target).ok());
  ASSERT_TRUE(WriteFileAtomic(target + "/f", "x").ok());
  UniqueFd open_file(::open((target + "/f").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(open_file);
  Status st = Unmount(target);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(MountsUnder(dir_).empty());
}

TEST_F(MountTest, UnmountOfANonMountIsOk) {
  ASSERT_TRUE(MakeDirs(dir_ + "/plain").ok());
  EXPECT_TRUE(Unmount(dir_ + "/plain").ok());
  EXPECT_TRUE(Unmount(dir_ + "/does-not-exist").ok());
}

TEST_F(MountTest, MountOverlayWithAMissingLowerFails) {
  for (const auto& d : {dir_ + "/upper", dir_ + "/work", dir_ + "/merged"})
    ASSERT_TRUE(MakeDirs(d).ok());
  Status st = MountOverlay(dir_ + "/no-lower", dir_ + "/upper", dir_ + "/work", dir_ + "/merged");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(dir_ + "/merged"), std::string::npos) << st.message();
  EXPECT_TRUE(MountsUnder(dir_).empty());
}

}  // namespace
}  // namespace adapt::os
