#include "storage/volume_request.h"

#include <gtest/gtest.h>

namespace adapt::storage {
namespace {

TEST(VolumeNameTest, AcceptsDnsLabels) {
  const std::string names[] = {"default", "a", "data-1", "0abc", std::string(63, 'x')};
  for (const auto& name : names) EXPECT_TRUE(ValidateVolumeName(name).ok()) << name;
}

TEST(VolumeNameTest, RefusesEverythingElse) {
  const std::string names[] = {"",    std::string(64, 'x'),   "-a", "a-", "A", "a_b", "a/b", "..",
                               "a b", std::string("a\0b", 3), "é"};
  for (const auto& name : names) {
    Status st = ValidateVolumeName(name);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << name;
    EXPECT_EQ(st.field(), "name");
  }
}

TEST(CreateVolumeTest, FillsTheDefaultSize) {
  auto req = CheckCreateVolume({.name = "data", .size_mib = std::nullopt});
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->name, "data");
  EXPECT_EQ(req->size_mib, limits::kSizeMiBDefault);
}

TEST(CreateVolumeTest, ChecksSizeBoundsNamingSizeMib) {
  EXPECT_TRUE(CheckCreateVolume({.name = "d", .size_mib = 64}).ok());
  EXPECT_TRUE(CheckCreateVolume({.name = "d", .size_mib = 131072}).ok());
  for (int64_t size : {int64_t{63}, int64_t{131073}, int64_t{-1}, int64_t{0}, INT64_MIN}) {
    auto req = CheckCreateVolume({.name = "d", .size_mib = size});
    ASSERT_FALSE(req.ok()) << size;
    EXPECT_EQ(req.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(req.status().field(), "size_mib");
  }
}

TEST(CreateVolumeTest, ChecksTheName) {
  EXPECT_EQ(CheckCreateVolume({.name = "", .size_mib = std::nullopt}).status().field(), "name");
  EXPECT_EQ(CheckCreateVolume({.name = "Data", .size_mib = std::nullopt}).status().field(), "name");
}

TEST(DeleteConfirmationTest, NeedsTheExactName) {
  EXPECT_TRUE(CheckDeleteConfirmation("data", "data").ok());
  EXPECT_EQ(CheckDeleteConfirmation("data", "").code(), Code::kInvalidArgument);
  EXPECT_EQ(CheckDeleteConfirmation("data", "Data").code(), Code::kInvalidArgument);
  EXPECT_EQ(CheckDeleteConfirmation("data", "data ").code(), Code::kInvalidArgument);
}

TEST(DeleteConfirmationTest, NeverTheDefault) {
  EXPECT_EQ(CheckDeleteConfirmation("default", "default").code(), Code::kConflict);
}

}  // namespace
}  // namespace adapt::storage
