// Real mounts and a real mount namespace: needs root, /dev/loop-control and mkfs.ext4.
#include "os/mount_propagation.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "os/files.h"
#include "os/loop_device.h"
#include "os/mount.h"
#include "os/mount_info.h"
#include "os/process.h"
#include "os/temp_dir.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

bool Mounts(pid_t pid, const std::string& point) {
  auto mounts = ReadMountInfo("/proc/" + std::to_string(pid) + "/mountinfo");
  return std::any_of(mounts.begin(), mounts.end(),
                     [&](const MountInfo& m) { return m.point == point; });
}

class MountPropagationTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "mount_propagation_test mounts for real and must run as root";
    ASSERT_TRUE(MakeDirs(dir_).ok());
  }

  void TearDown() override {
    if (child_ > 0) {
      (void)Signal(child_, SIGKILL);  // best effort: teardown
      (void)Wait(child_);
    }
    for (const auto& m : MountsUnder(tmp_.path())) (void)Unmount(m);  // best effort: teardown
  }

  void MountDisk() {
    ASSERT_TRUE(CreateSparseFile(image_, 64ull * 1024 * 1024).ok());
    ASSERT_TRUE(RunChecked({"mkfs.ext4", "-q", "-F", image_}).ok());
    ASSERT_TRUE(MakeDirs(disk_).ok());
    Status st = MountLoopExt4(image_, disk_);
    ASSERT_TRUE(st.ok()) << st.message();
  }

  os::TempDir tmp_{"mount-propagation-test"};
  const std::string dir_ = tmp_.path() + "/state";
  const std::string image_ = tmp_.path() + "/disk.img";
  const std::string disk_ = dir_ + "/disk";
  pid_t child_ = -1;
};

TEST_F(MountPropagationTest, AChildsCopyOfTheMountsLosesWhatTheHostUnmountsBelow) {
  auto bound = ShareMountsBelow(dir_);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  ASSERT_NO_FATAL_FAILURE(MountDisk());
  // A child in a mount namespace of its own (as runsc runs) copies the disk's mount.
  SpawnOptions options;
  options.hide_proc_sys_net = true;
  auto child = Spawn({"sleep", "60"}, options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  child_ = *child;
  ASSERT_TRUE(Mounts(child_, disk_)) << "the child's namespace has no copy of the disk";

  ASSERT_TRUE(Unmount(disk_).ok());
  // The copy goes with the host's mount, and the loop device with it, while the child lives.
  for (int i = 0; i < 100 && (LoopDeviceBacks(image_) || Mounts(child_, disk_)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(Mounts(child_, disk_));
  EXPECT_FALSE(LoopDeviceBacks(image_)) << "the child's copy holds the disk";
  EXPECT_EQ(::kill(child_, 0), 0) << "the child must still live for this to say anything";
}

TEST_F(MountPropagationTest, TheBindOfItselfIsFoundAgainAndReleasedOnlyWhenNothingIsBelowIt) {
  auto bound = ShareMountsBelow(dir_);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  if (*bound != MountSharing::kBoundOntoItself) {
    EXPECT_EQ(*bound, MountSharing::kShared);
    // A host whose / is shared (systemd's) needs no bind: the directory's mount is shared.
    auto mounts = ReadMountInfo();
    auto holder = MountHolding(mounts, dir_);
    ASSERT_NE(holder, nullptr);
    EXPECT_TRUE(holder->shared);
    EXPECT_FALSE(IsMountPoint(dir_));
    return;
  }
  EXPECT_TRUE(IsMountPoint(dir_));
  auto again = ShareMountsBelow(dir_);  // the next start's
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, MountSharing::kBoundOntoItself);
  EXPECT_EQ(MountsUnder(dir_), std::vector<std::string>{dir_}) << "bound once, not stacked";
  auto mounts = ReadMountInfo();
  auto holder = MountHolding(mounts, dir_);
  ASSERT_NE(holder, nullptr);
  EXPECT_TRUE(holder->shared);

  // A sandbox's disk below keeps it (the stop of an adaptd whose sandboxes run on).
  ASSERT_NO_FATAL_FAILURE(MountDisk());
  ASSERT_TRUE(ReleaseBindOfItself(dir_).ok());
  EXPECT_TRUE(IsMountPoint(dir_));
  EXPECT_TRUE(Exists(disk_ + "/lost+found")) << "the disk stays reachable";
  ASSERT_TRUE(Unmount(disk_).ok());
  // adaptd's own files there are still open at its stop (its store, its lock).
  UniqueFd open_file(::open((dir_ + "/adapt.db").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(open_file);
  ASSERT_TRUE(ReleaseBindOfItself(dir_).ok());
  EXPECT_FALSE(IsMountPoint(dir_));
  EXPECT_EQ(::write(open_file.get(), "x", 1), 1);
  EXPECT_EQ(*ReadFile(dir_ + "/adapt.db"), "x") << "the file is the directory's, bound or not";
}

TEST_F(MountPropagationTest, NoBindHidesWhatAnEarlierAdaptdMountedBelow) {
  ASSERT_NO_FATAL_FAILURE(MountDisk());
  auto mounts = ReadMountInfo();
  const bool shared_already = MountHolding(mounts, dir_)->shared;  // where / is (systemd)
  auto bound = ShareMountsBelow(dir_);
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  EXPECT_EQ(*bound, shared_already ? MountSharing::kShared : MountSharing::kLeftPrivate);
  EXPECT_EQ(MountsUnder(dir_), std::vector<std::string>{disk_});
  EXPECT_TRUE(Exists(disk_ + "/lost+found"));
}

TEST(MountInfoTest, ReadsPointsRootsAndPeerGroupsAndFindsTheHoldingMount) {
  os::TempDir tmp("mount-info-test");
  const std::string file = tmp.path() + "/mountinfo";
  ASSERT_TRUE(WriteFileAtomic(file,
                              "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
                              "40 22 254:0 /srv/a\\040b /srv/a\\040b rw shared:7 master:2 - ext4 "
                              "/dev/vda rw\n"
                              "41 40 7:1 / /srv/a\\040b/disk rw master:3 - ext4 /dev/loop1 rw\n"
                              "42 22 0:5 / /proc rw - proc proc rw\n")
                  .ok());
  auto mounts = ReadMountInfo(file);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[1].id, "40");
  EXPECT_EQ(mounts[1].parent, "22");
  EXPECT_EQ(mounts[1].device, "254:0");
  EXPECT_EQ(mounts[1].root, "/srv/a b");
  EXPECT_EQ(mounts[1].point, "/srv/a b");
  EXPECT_TRUE(mounts[1].shared);
  EXPECT_FALSE(mounts[2].shared) << "a slave alone is not in a peer group";
  EXPECT_FALSE(mounts[3].shared);
  EXPECT_EQ(MountHolding(mounts, "/srv/a b/disk/x")->id, "41");
  EXPECT_EQ(MountHolding(mounts, "/srv/a b")->id, "40");
  EXPECT_EQ(MountHolding(mounts, "/srv/a bc")->id, "22") << "a sibling prefix is not below";
  EXPECT_TRUE(ReadMountInfo(tmp.path() + "/none").empty());
}

}  // namespace
}  // namespace adapt::os
