#include "runtime/disk_templates.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "os/files.h"
#include "os/sparse_copy.h"
#include "os/temp_dir.h"

namespace adapt::runtime {
namespace {

constexpr uint64_t kMiB = 64;

class DiskTemplatesTest : public testing::Test {
 protected:
  static ino_t Inode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_ino;
  }

  // An ext4 superblock's magic (0xEF53, little-endian at byte 1080) and the image's size.
  static void ExpectEmptyExt4(const std::string& image, uint64_t mib) {
    auto bytes = os::ReadFile(image);
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    ASSERT_EQ(bytes->size(), mib << 20) << image;
    EXPECT_EQ(static_cast<unsigned char>((*bytes)[1080]), 0x53) << image;
    EXPECT_EQ(static_cast<unsigned char>((*bytes)[1081]), 0xEF) << image;
  }

  os::TempDir tmp_{"disk-templates-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(DiskTemplatesTest, EveryDiskOfASizeIsASparseCopyOfOneTemplate) {
  DiskTemplates disks(dir_ + "/templates");
  ASSERT_TRUE(disks.CreateDisk(dir_ + "/a.img", kMiB).ok());
  const std::string tmpl = disks.TemplatePath(kMiB);
  ASSERT_TRUE(os::Exists(tmpl));
  ino_t made = Inode(tmpl);
  ASSERT_TRUE(disks.CreateDisk(dir_ + "/b.img", kMiB).ok());

  EXPECT_EQ(Inode(tmpl), made) << "the template was formatted again";
  ExpectEmptyExt4(dir_ + "/a.img", kMiB);
  EXPECT_EQ(*os::ReadFile(dir_ + "/a.img"), *os::ReadFile(tmpl));
  EXPECT_EQ(*os::ReadFile(dir_ + "/b.img"), *os::ReadFile(tmpl));
  // Holes stay holes: the copy holds the metadata mkfs wrote, not the disk's size.
  EXPECT_LT(os::AllocatedBytes(dir_ + "/b.img"), (kMiB << 20) / 4);
  EXPECT_FALSE(os::Exists(dir_ + "/b.img.new"));
  // A disk is a copy, never the template itself: writing to it leaves the template as it was.
  EXPECT_NE(Inode(dir_ + "/b.img"), made);
}

TEST_F(DiskTemplatesTest, SizesBeyondTheBoundAreFormattedWithoutATemplate) {
  DiskTemplates disks(dir_ + "/templates", /*max_sizes=*/1);
  ASSERT_TRUE(disks.CreateDisk(dir_ + "/a.img", kMiB).ok());
  ASSERT_TRUE(disks.CreateDisk(dir_ + "/b.img", kMiB + 16).ok());

  EXPECT_TRUE(os::Exists(disks.TemplatePath(kMiB)));
  EXPECT_FALSE(os::Exists(disks.TemplatePath(kMiB + 16)));
  EXPECT_EQ(os::ListDir(dir_ + "/templates").size(), 1u);
  ExpectEmptyExt4(dir_ + "/b.img", kMiB + 16);
}

TEST_F(DiskTemplatesTest, ATemplateCutShortByACrashIsNeitherUsedNorCounted) {
  // What a crash during mkfs leaves: the temporary name, half written.
  ASSERT_TRUE(os::MakeDirs(dir_ + "/templates").ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/templates/ext4-64.img.new", "half").ok());
  DiskTemplates disks(dir_ + "/templates", /*max_sizes=*/1);

  ASSERT_TRUE(disks.CreateDisk(dir_ + "/a.img", kMiB).ok());

  EXPECT_TRUE(os::Exists(disks.TemplatePath(kMiB)));
  ExpectEmptyExt4(dir_ + "/a.img", kMiB);
}

TEST_F(DiskTemplatesTest, AtStartUpAnUnfinishedTemplateIsRemovedAndFinishedOnesStay) {
  DiskTemplates disks(dir_ + "/templates");
  ASSERT_TRUE(disks.CreateDisk(dir_ + "/a.img", kMiB).ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/templates/ext4-128.img.new", "half").ok());

  disks.RemoveUnfinished();

  EXPECT_FALSE(os::Exists(dir_ + "/templates/ext4-128.img.new"));
  EXPECT_TRUE(os::Exists(disks.TemplatePath(kMiB)));
}

}  // namespace
}  // namespace adapt::runtime
