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
  char type;         // 'f' file, 'd' dir, 'l' symlink, 'h' hard link
  std::string data;  // file content or link target
  int uid = 0;
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
      } else if (it.type == 'l') {
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_perm(e, 0777);
        archive_entry_set_symlink(e, it.data.c_str());
      } else {
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_hardlink(e, it.data.c_str());
      }
      archive_write_header(a, e);
      if (it.type == 'f') archive_write_data(a, it.data.data(), it.data.size());
      archive_entry_free(e);
    }
    archive_write_close(a);
    archive_write_free(a);
    return path;
  }

  Status Unpack(const std::string& tar) {
    return UnpackLayer(tar, (dir_ / "out").string(), 1 << 30, "layer x");
  }

  fs::path dir_;
};

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
  EXPECT_EQ(*UncompressedDigest(Tar(items), "layer x"), want);
  auto gz = Tar(items, true);
  EXPECT_NE(Sha256Of(*os::ReadFile(gz)), want);
  EXPECT_EQ(*UncompressedDigest(gz, "layer x"), want);
  EXPECT_EQ(*UncompressedDigest(Tar(items, false, true), "layer x"), want);
  EXPECT_NE(*UncompressedDigest(Tar({{"a", 'f', "other content"}}, true), "layer x"), want);
  EXPECT_FALSE(UncompressedDigest((dir_ / "missing").string(), "layer x").ok());
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
  auto st = UnpackLayer((dir_ / "junk").string(), (dir_ / "out").string(), 1 << 30, "layer x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("layer x cannot be unpacked"), std::string::npos);
}

}  // namespace
}  // namespace adapt::image
