#include "storage/volume_key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/hex.h"
#include "os/files.h"

namespace adapt::storage {
namespace {

std::string Counting(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += static_cast<char>(i);
  return s;
}

TEST(VolumeKeyTest, DerivesRfc5869HkdfSha512) {
  // Computed independently with Python's hmac module (RFC 5869 over SHA-512).
  auto key = DeriveVolumeKey(Counting(32), "vol_abc");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(HexEncode(*key),
            "1107fc4b861aa944d436d94276728444033d4a680433919a38d8edcfc6e50766ffa6252213047c250ae"
            "1919dec3fa0088d84dbfe057f74f2a3c5ad1728e116a4");
}

TEST(VolumeKeyTest, EachVolumeAndMasterGetsItsOwnKey) {
  auto a = DeriveVolumeKey(Counting(32), "vol_a");
  auto b = DeriveVolumeKey(Counting(32), "vol_b");
  auto c = DeriveVolumeKey(Counting(33), "vol_a");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(*a, *DeriveVolumeKey(Counting(32), "vol_a"));
}

class MasterKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("volume_key_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(MasterKeyTest, IsCreatedOnceWithMode0600) {
  std::string path = (dir_ / "master.key").string();
  auto first = LoadMasterKey(path, "");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->size(), kMasterKeyBytes);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = LoadMasterKey(path, "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*first, *again);
}

TEST_F(MasterKeyTest, TheEnvironmentWinsAndIsChecked) {
  std::string path = (dir_ / "unused.key").string();
  std::string hex(64, 'a');
  auto key = LoadMasterKey(path, hex);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, std::string(32, '\xaa'));
  EXPECT_FALSE(os::Exists(path));
  EXPECT_FALSE(LoadMasterKey(path, std::string(62, 'a')).ok());
  EXPECT_FALSE(LoadMasterKey(path, std::string(64, 'g')).ok());
}

TEST_F(MasterKeyTest, ACorruptFileIsAnError) {
  std::string path = (dir_ / "bad.key").string();
  ASSERT_TRUE(os::WriteFileAtomic(path, "not hex\n", 0600).ok());
  EXPECT_FALSE(LoadMasterKey(path, "").ok());
}

}  // namespace
}  // namespace adapt::storage
