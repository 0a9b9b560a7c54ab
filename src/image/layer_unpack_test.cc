#include "image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <filesystem>

#include "image/digest.h"
#include "os/files.h"

namespace adapt::image {
namespace {

namespace fs = std::filesystem;

struct Item {
  std::string path;
  char type;         // 'f' file, 'd' dir, 'l' symlink, 'h' hard link, 'c' char or 'b' block device
  std::string data;  // file content or link target
  int uid = 0;
  unsigned major = 0, minor = 0;                                 // devices
  std::vector<std::pair<std::string, std::string>> xattrs = {};  // name, value
};

class LayerUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("adapt-layer-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Tar(const std::vector<Item>& items, bool gzip = false, bool zstd = false) {
    std::string path = (dir_ / "layer.tar").string();
    archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    if (gzip) archive_write_add_filter_gzip(a);
    if (zstd) archive_write_add_filter_zstd(a);
    archive_write_open_filename(a, path.c_str());
    for (const auto& it : items) {
      archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, it.path.c_str());
      archive_entry_set_uid(e, it.uid);
      archive_entry_set_gid(e, it.uid);
      if (it.type == 'f') {
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, static_cast<la_int64_t>(it.data.size()));
      } else if (it.type == 'd') {
        archive_entry_set_filetype(e, AE_IFDIR);
        archive_entry_set_perm(e, 0755);
      } else if (it.type == 'c' || it.type == 'b') {
        archive_entry_set_filetype(e, it.type == 'c' ? AE_IFCHR : AE_IFBLK);
        archive_entry_set_perm(e, 0666);
        archive_entry_set_rdev(e, makedev(it.major, it.minor));
      } else if (it.type == 'l') {
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_perm(e, 0777);
        archive_entry_set_symlink(e, it.data.c_str());
      } else {
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_hardlink(e, it.data.c_str());
      }
      for (const auto& [name, value] : it.xattrs)
        archive_entry_xattr_add_entry(e, name.c_str(), value.data(), value.size());
      archive_write_header(a, e);
      if (it.type == 'f') archive_write_data(a, it.data.data(), it.data.size());
      archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return path;
  }

  Status Unpack(const std::string& tar) {
    UnpackBudget budget;
    return UnpackLayer(tar, (dir_ / "out").string(), budget, "layer x");
  }

  // A fresh, empty directory to unpack into.
  std::string Out(const std::string& name) {
    fs::create_directories(dir_ / name);
    return (dir_ / name).string();
  }

  fs::path dir_;
};

// Each entry is checked for room on the host's disk before it is written, with its size.
TEST_F(LayerUnpackTest, EachEntryIsCheckedForRoomBeforeItIsWritten) {
  UnpackBudget budget;
  std::vector<uint64_t> asked;
  budget.room = [&](uint64_t bytes) -> Status {
    asked.push_back(bytes);
    if (bytes > 2) return Status(Code::kResourceExhausted, "the host has too little free space");
    return Status::Ok();
  };
  Status st = UnpackLayer(Tar({{"a", 'f', "xy"}, {"b", 'f', "long"}, {"c", 'f', "z"}}), Out("room"),
                          budget, "layer x");
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st.message();
  EXPECT_EQ(asked, (std::vector<uint64_t>{2, 4}));
  EXPECT_TRUE(fs::exists(dir_ / "room/a"));
  EXPECT_FALSE(fs::exists(dir_ / "room/b"));
}

TEST_F(LayerUnpackTest, FilesOwnershipAndLinks) {
  auto tar = Tar({{"./etc/", 'd', ""},
                  {"etc/hello", 'f', "hi\n", 1234},
                  {"etc/link", 'l', "/etc/hello"},
                  {"etc/hard", 'h', "etc/hello"}});
  ASSERT_TRUE(Unpack(tar).ok());
  EXPECT_EQ(*os::ReadFile((dir_ / "out/etc/hello").string()), "hi\n");
  struct stat st;
  ASSERT_EQ(::stat((dir_ / "out/etc/hello").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_nlink, 2u);
  EXPECT_EQ(fs::read_symlink(dir_ / "out/etc/link"), "/etc/hello");
}

TEST_F(LayerUnpackTest, GzipAndZstdLayers) {
  ASSERT_TRUE(Unpack(Tar({{"a", 'f', "gz"}}, true)).ok());
  EXPECT_EQ(*os::ReadFile((dir_ / "out/a").string()), "gz");
  fs::remove_all(dir_ / "out");
  fs::create_directories(dir_ / "out");
  ASSERT_TRUE(Unpack(Tar({{"b", 'f', "zst"}}, false, true)).ok());
  EXPECT_EQ(*os::ReadFile((dir_ / "out/b").string()), "zst");
}

TEST_F(LayerUnpackTest, DiffIdIsTheDigestOfTheUncompressedTarWhateverTheCompression) {
  std::vector<Item> items = {{"a", 'f', "same content"}, {"d/", 'd', ""}};
  auto plain = os::ReadFile(Tar(items));
  ASSERT_TRUE(plain.ok());
  std::string want = Sha256Of(*plain);
  EXPECT_EQ(*UncompressedDigest(Tar(items), kMaxImageBytes, "layer x"), want);
  auto gz = Tar(items, true);
  EXPECT_NE(Sha256Of(*os::ReadFile(gz)), want);
  EXPECT_EQ(*UncompressedDigest(gz, kMaxImageBytes, "layer x"), want);
  EXPECT_EQ(*UncompressedDigest(Tar(items, false, true), kMaxImageBytes, "layer x"), want);
  EXPECT_NE(
      *UncompressedDigest(Tar({{"a", 'f', "other content"}}, true), kMaxImageBytes, "layer x"),
      want);
  EXPECT_FALSE(UncompressedDigest((dir_ / "missing").string(), kMaxImageBytes, "layer x").ok());
}

TEST_F(LayerUnpackTest, WhiteoutsBecomeOverlayWhiteoutsAndOpaqueDirectories) {
  auto tar = Tar({{"etc/", 'd', ""},
                  {"etc/.wh.motd", 'f', ""},
                  {"var/", 'd', ""},
                  {"var/.wh..wh..opq", 'f', ""},
                  {"var/new", 'f', "n"}});
  ASSERT_TRUE(Unpack(tar).ok());
  struct stat st;
  ASSERT_EQ(::lstat((dir_ / "out/etc/motd").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(0, 0));
  EXPECT_FALSE(fs::exists(dir_ / "out/etc/.wh.motd"));
  char v[4] = {0};
  ASSERT_EQ(::lgetxattr((dir_ / "out/var").c_str(), "trusted.overlay.opaque", v, sizeof v), 1);
  EXPECT_EQ(v[0], 'y');
  EXPECT_FALSE(fs::exists(dir_ / "out/var/.wh..wh..opq"));
  EXPECT_TRUE(fs::exists(dir_ / "out/var/new"));
}

TEST_F(LayerUnpackTest, DotDotEntriesAreRefused) {
  auto st = Unpack(Tar({{"../escape", 'f', "x"}}));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("escapes the layer"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir_ / "escape"));
  EXPECT_FALSE(Unpack(Tar({{"a/../../escape2", 'f', "x"}})).ok());
  EXPECT_FALSE(fs::exists(dir_ / "escape2"));
}

TEST_F(LayerUnpackTest, WritingThroughASymlinkIsRefused) {
  fs::create_directories(dir_ / "victim");
  auto tar = Tar({{"evil", 'l', (dir_ / "victim").string()}, {"evil/pwned", 'f', "x"}});
  EXPECT_FALSE(Unpack(tar).ok());
  EXPECT_FALSE(fs::exists(dir_ / "victim/pwned"));
  auto tar2 = Tar({{"rel", 'l', "../.."}, {"rel/pwned2", 'f', "x"}});
  EXPECT_FALSE(Unpack(tar2).ok());
  EXPECT_FALSE(fs::exists(dir_ / "pwned2"));
}

TEST_F(LayerUnpackTest, HardLinkOutsideTheLayerIsRefused) {
  EXPECT_FALSE(Unpack(Tar({{"h", 'h', "../../etc/passwd"}})).ok());
  auto tar = Tar({{"evil", 'l', "/etc"}, {"h2", 'h', "evil/passwd"}});
  EXPECT_FALSE(Unpack(tar).ok());
  EXPECT_FALSE(fs::exists(dir_ / "out/h2"));
}

TEST_F(LayerUnpackTest, WhiteoutThroughASymlinkIsRefused) {
  fs::create_directories(dir_ / "victim");
  auto tar = Tar({{"evil", 'l', (dir_ / "victim").string()}, {"evil/.wh.x", 'f', ""}});
  EXPECT_FALSE(Unpack(tar).ok());
  EXPECT_FALSE(fs::exists(dir_ / "victim/x"));
}

TEST_F(LayerUnpackTest, NotATarIsAClearError) {
  ASSERT_TRUE(os::WriteFileAtomic((dir_ / "junk").string(), std::string(2000, 'j')).ok());
  UnpackBudget budget;
  auto st = UnpackLayer((dir_ / "junk").string(), (dir_ / "out").string(), budget, "layer x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("layer x cannot be unpacked"), std::string::npos);
}

// The 32 GiB limit holds for an image, not for each of its layers: the budget one pull passes
// through its layers' unpacks runs out.
TEST_F(LayerUnpackTest, TheLimitHoldsForAllOfAnImagesLayersTogether) {
  std::string layer = Tar({{"a", 'f', std::string(100000, 'x')}});
  uint64_t tar_bytes = fs::file_size(layer);
  UnpackBudget budget;
  budget.bytes_left = tar_bytes * 3 / 2;
  ASSERT_TRUE(UnpackLayer(layer, Out("one"), budget, "layer 1").ok());
  EXPECT_LE(budget.bytes_left, tar_bytes * 3 / 2 - 100000);  // the layer's data at least
  auto st = UnpackLayer(layer, Out("two"), budget, "layer 2");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("past the 32 GiB image-build limit"), std::string::npos)
      << st.message();
  EXPECT_FALSE(fs::exists(dir_ / "two/a"));  // refused before it was written
}

// Whiteouts, opaque markers and the root's entry are not written, but their data is
// decompressed all the same: it counts.
TEST_F(LayerUnpackTest, SkippedEntriesCountTowardTheLimit) {
  for (const char* skipped : {"etc/.wh.motd", "var/.wh..wh..opq", "./"}) {
    std::string layer = Tar({{skipped, 'f', std::string(1 << 20, 'w')}}, true);
    UnpackBudget budget;
    budget.bytes_left = 512 << 10;
    auto st = UnpackLayer(layer, Out(std::string("skip") + skipped[0]), budget, "layer x");
    ASSERT_FALSE(st.ok()) << skipped;
    EXPECT_NE(st.message().find("past the 32 GiB"), std::string::npos) << st.message();
  }
}

TEST_F(LayerUnpackTest, TheDiffIdIsNotComputedPastTheLimit) {
  // 8 MiB of zeros compress to a few hundred bytes: a small blob, a large stream.
  std::string bomb = Tar({{"zeros", 'f', std::string(8 << 20, '\0')}}, false, true);
  EXPECT_LT(fs::file_size(bomb), 64u << 10);
  auto digest = UncompressedDigest(bomb, 1 << 20, "layer x");
  ASSERT_FALSE(digest.ok());
  EXPECT_NE(digest.status().message().find("past the 32 GiB"), std::string::npos);
  EXPECT_TRUE(UncompressedDigest(bomb, 9 << 20, "layer x").ok());
}

TEST_F(LayerUnpackTest, ALayerOfTooManyEntriesIsRefusedWhateverTheEntries) {
  std::vector<Item> items;
  for (int i = 0; i < 11; ++i) items.push_back({"d/.wh.f" + std::to_string(i), 'f', ""});
  UnpackBudget budget;
  budget.max_layer_entries = 10;
  auto st = UnpackLayer(Tar(items), Out("many"), budget, "layer x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("more than 10 entries"), std::string::npos) << st.message();
  items.pop_back();
  EXPECT_TRUE(UnpackLayer(Tar(items), Out("ten"), budget, "layer x").ok());
}

TEST_F(LayerUnpackTest, WhiteoutNamesHeldForLaterAreBounded) {
  std::vector<Item> items;
  for (int i = 0; i < 20; ++i) items.push_back({"dir/.wh.file" + std::to_string(i), 'f', ""});
  UnpackBudget budget;
  budget.max_whiteout_name_bytes = 200;
  auto st = UnpackLayer(Tar(items), Out("whiteouts"), budget, "layer x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("more than 200 bytes of paths"), std::string::npos) << st.message();
}

TEST_F(LayerUnpackTest, DeviceNodesAreRefusedButAWhiteoutDeviceIsKept) {
  for (const Item& device : {Item{"dev/sda", 'b', "", 0, 8, 0}, Item{"dev/mem", 'c', "", 0, 1, 1},
                             Item{"dev/null", 'c', "", 0, 1, 3}}) {
    auto st = Unpack(Tar({{"dev/", 'd', ""}, device}));
    ASSERT_FALSE(st.ok()) << device.path;
    EXPECT_NE(st.message().find("device node 'dev/"), std::string::npos) << st.message();
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "out" / device.path))) << device.path;
  }
  if (::geteuid() != 0) GTEST_SKIP() << "making a 0/0 character device needs root";
  ASSERT_TRUE(Unpack(Tar({{"etc/", 'd', ""}, {"etc/gone", 'c', "", 0, 0, 0}})).ok());
  struct stat st;
  ASSERT_EQ(::lstat((dir_ / "out/etc/gone").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(0, 0));
}

// trusted.overlay.* in a layer would steer the host's overlayfs (redirect, metacopy) when the
// layer is a lowerdir; security.* would set the host's labels.
TEST_F(LayerUnpackTest, XattrsTheHostReadsAreDroppedOthersKept) {
  if (::geteuid() != 0) GTEST_SKIP() << "trusted.* xattrs need root to be set at all";
  // A version 2 file capability: cap_net_raw in the permitted set.
  std::string cap(
      "\x00\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 20);
  Item file{"bin/ping", 'f', "elf"};
  file.xattrs = {{"trusted.overlay.redirect", "/etc"},
                 {"trusted.overlay.metacopy", ""},
                 {"security.selinux", "system_u:object_r:shadow_t:s0"},
                 {"security.capability", cap},
                 {"user.note", "kept"}};
  Item dir{"var/", 'd', ""};
  dir.xattrs = {{"trusted.overlay.opaque", "y"}};
  ASSERT_TRUE(Unpack(Tar({{"bin/", 'd', ""}, file, dir})).ok());
  auto has = [](const fs::path& p, const char* name) {
    return ::lgetxattr(p.c_str(), name, nullptr, 0) >= 0;
  };
  fs::path ping = dir_ / "out/bin/ping";
  EXPECT_FALSE(has(ping, "trusted.overlay.redirect"));
  EXPECT_FALSE(has(ping, "trusted.overlay.metacopy"));
  EXPECT_FALSE(has(ping, "security.selinux"));
  EXPECT_FALSE(has(dir_ / "out/var", "trusted.overlay.opaque"));
  EXPECT_TRUE(has(ping, "user.note"));
  EXPECT_TRUE(has(ping, "security.capability"));
}

TEST_F(LayerUnpackTest, EntryNamesInErrorsAreMadePrintable) {
  auto st = Unpack(Tar({{"../\x1b[31mred\nline", 'f', "x"}}));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'../?[31mred?line'"), std::string::npos) << st.message();
  st = Unpack(Tar({{"d/.wh.\x1b", 'f', ""}, {"d/\x1b", 'f', "x"}}));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().find('\x1b'), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'d/?'"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace adapt::image
