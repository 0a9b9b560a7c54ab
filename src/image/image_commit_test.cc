// ImageStore::Commit: a sandbox's writable layer stored as a new image on a base.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "image/digest.h"
#include "image/image_store.h"
#include "image/tar_test_support.h"
#include "os/files.h"

namespace adapt::image {
namespace {

template <typename R>
std::string StoredText(const R& r) {
  return r.ok() ? *r : "error: " + r.status().message();
}

namespace fs = std::filesystem;

class ImageCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("adapt-image-commit-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "local" / "etc");
    ASSERT_TRUE(os::WriteFileAtomic((dir_ / "local/etc/issue").string(), "base").ok());
    store_.emplace((dir_ / "store").string());
    ASSERT_TRUE(store_->Init().ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A layer that adds `file` (holding `text`) and deletes /etc/issue.
  static ImageStore::FillLayer Layer(const std::string& file, const std::string& text) {
    return [file, text](const std::string& dir) -> Status {
      RETURN_IF_ERROR(os::MakeDirs(dir + "/etc", 0755));
      RETURN_IF_ERROR(os::MakeWhiteout(dir + "/etc/issue"));
      return os::WriteFileAtomic(dir + "/" + file, text);
    };
  }
  std::string LayerOf(const std::string& key) const {
    std::string digest = Sha256Of(key);
    return (dir_ / "store/layers" / ("commit-" + digest.substr(7))).string();
  }
  size_t TmpEntries() const { return os::ListDir((dir_ / "store/tmp").string()).size(); }

  fs::path dir_;
  std::optional<ImageStore> store_;
  const nlohmann::json config_ = {{"config", {{"Cmd", {"/bin/sh"}}}}};
};

TEST_F(ImageCommitTest, ALayerOnALocalImageIsStoredAboveItsRootfs) {
  ImageStore::CommitBase base{
      .key = "", .local_rootfs = (dir_ / "local").string(), .config = config_};
  auto image = store_->Commit("import:img_a", base, Layer("kept.txt", "twelve bytes"));
  ASSERT_TRUE(image.ok()) << image.status().message();
  ASSERT_EQ(image->layer_dirs.size(), 2u);
  EXPECT_EQ(image->layer_dirs[0], (dir_ / "local").string());
  EXPECT_EQ(image->layer_dirs[1], LayerOf("import:img_a"));
  EXPECT_EQ(image->size, 12u);
  EXPECT_TRUE(image->digest.starts_with("sha256:"));
  EXPECT_EQ(image->config, config_);
  struct stat st;
  ASSERT_EQ(::lstat((image->layer_dirs[1] + "/etc/issue").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(TmpEntries(), 0u);
  auto again = store_->Lookup("import:img_a");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->layer_dirs, image->layer_dirs);
}

TEST_F(ImageCommitTest, AChainSharesLayersAndCollectionKeepsWhatARemainingImageUses) {
  ImageStore::CommitBase local{
      .key = "", .local_rootfs = (dir_ / "local").string(), .config = config_};
  ASSERT_TRUE(store_->Commit("import:img_a", local, Layer("a", "a")).ok());
  ImageStore::CommitBase on_a{.key = "import:img_a", .local_rootfs = "", .config = config_};
  auto b = store_->Commit("import:img_b", on_a, Layer("b", "b"));
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->layer_dirs.size(), 3u);
  EXPECT_EQ(b->layer_dirs[0], (dir_ / "local").string());
  EXPECT_EQ(b->layer_dirs[1], LayerOf("import:img_a"));
  EXPECT_EQ(b->layer_dirs[2], LayerOf("import:img_b"));

  // img_a deleted: its layer stays, img_b is built on it.
  ASSERT_TRUE(store_->CollectGarbage([] { return std::set<std::string>{"import:img_b"}; }).ok());
  EXPECT_FALSE(store_->Lookup("import:img_a").has_value());
  EXPECT_TRUE(os::Exists(LayerOf("import:img_a")));
  ASSERT_TRUE(store_->Lookup("import:img_b").has_value());
  // Both gone: both layers go; the operator's local image stays.
  ASSERT_TRUE(store_->CollectGarbage([] { return std::set<std::string>{}; }).ok());
  EXPECT_FALSE(os::Exists(LayerOf("import:img_a")));
  EXPECT_FALSE(os::Exists(LayerOf("import:img_b")));
  EXPECT_EQ(StoredText(os::ReadFile((dir_ / "local/etc/issue").string())), "base");
}

TEST_F(ImageCommitTest, AFailedCopyLeavesNoReferenceLayerOrTemporaryFiles) {
  ImageStore::CommitBase local{
      .key = "", .local_rootfs = (dir_ / "local").string(), .config = config_};
  auto failed = store_->Commit("import:img_a", local, [](const std::string& dir) {
    // Part of the copy made, then the sandbox went away.
    RETURN_IF_ERROR(os::MakeDirs(dir, 0755));
    RETURN_IF_ERROR(os::WriteFileAtomic(dir + "/half", "x"));
    return Status(Code::kConflict, "sandbox sbx_1 is deleting");
  });
  EXPECT_EQ(failed.status().code(), Code::kConflict);
  EXPECT_FALSE(store_->Lookup("import:img_a").has_value());
  EXPECT_FALSE(os::Exists(LayerOf("import:img_a")));
  EXPECT_TRUE(os::ListDir((dir_ / "store/refs").string()).empty());
  EXPECT_EQ(TmpEntries(), 0u);
}

TEST_F(ImageCommitTest, ABaseNoLongerStoredIsAConflictAndCopiesNothing) {
  bool filled = false;
  ImageStore::CommitBase gone{.key = "import:img_gone", .local_rootfs = "", .config = config_};
  auto failed = store_->Commit("import:img_b", gone, [&](const std::string&) {
    filled = true;
    return Status::Ok();
  });
  EXPECT_EQ(failed.status().code(), Code::kConflict);
  EXPECT_FALSE(filled);
  EXPECT_TRUE(os::ListDir((dir_ / "store/layers").string()).empty());
}

// A commit's layer is named by the sha256 of its image's key, which anyone can compute: an
// import whose config names that as a diff id, with a layer blob of the key's very bytes (a
// plain blob is its own proof), must not be handed the commit's layer.
TEST_F(ImageCommitTest, AnImportNamingACommitsLayerAsADiffIdIsNotGivenIt) {
  using testing_support::MakeTar;
  ImageStore::CommitBase local{
      .key = "", .local_rootfs = (dir_ / "local").string(), .config = config_};
  auto saved = store_->Commit("import:img_a", local, Layer("secret.txt", "the victim's"));
  ASSERT_TRUE(saved.ok()) << saved.status().message();
  const std::string layer = "import:img_a";  // its sha256 names the commit's layer
  const std::string config =
      nlohmann::json{{"os", "linux"},
                     {"architecture", "amd64"},
                     {"rootfs", {{"type", "layers"}, {"diff_ids", {Sha256Of(layer)}}}}}
          .dump();
  nlohmann::json manifest = nlohmann::json::array(
      {{{"Config", "config.json"}, {"RepoTags", {"forged:1"}}, {"Layers", {"layer.tar"}}}});
  const std::string archive = MakeTar({{"layer.tar", layer, ""},
                                       {"config.json", config, ""},
                                       {"manifest.json", manifest.dump(), ""}});
  size_t at = 0;
  auto source = [&](char* buf, size_t n) -> long {
    size_t k = std::min(n, archive.size() - at);
    std::copy_n(archive.data() + at, k, buf);
    at += k;
    return static_cast<long>(k);
  };
  auto stolen = store_->ImportArchive("import:img_b", "", source);
  // Refused: the blob is no tar, and no layer stored under that name is the commit's.
  EXPECT_FALSE(stolen.ok());
  if (stolen.ok()) {
    for (const auto& dir : stolen->image.layer_dirs)
      EXPECT_FALSE(os::Exists(dir + "/secret.txt")) << dir;
  }
  EXPECT_TRUE(os::Exists(LayerOf("import:img_a") + "/secret.txt"));
}

// A store written before commits' layers had a name of their own has them moved at start-up.
TEST_F(ImageCommitTest, AnOlderStoresCommitLayersAreMovedToTheirOwnNames) {
  ImageStore::CommitBase local{
      .key = "", .local_rootfs = (dir_ / "local").string(), .config = config_};
  ASSERT_TRUE(store_->Commit("import:img_a", local, Layer("kept.txt", "kept")).ok());
  const std::string old_dir = (dir_ / "store/layers" / Sha256Of("import:img_a").substr(7)).string();
  ASSERT_TRUE(os::Rename(LayerOf("import:img_a"), old_dir).ok());
  store_.emplace((dir_ / "store").string());
  ASSERT_TRUE(store_->Init().ok());
  EXPECT_FALSE(os::Exists(old_dir));
  auto image = store_->Lookup("import:img_a");
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->layer_dirs.back(), LayerOf("import:img_a"));
  EXPECT_TRUE(os::Exists(LayerOf("import:img_a") + "/kept.txt"));
}

}  // namespace
}  // namespace adapt::image
