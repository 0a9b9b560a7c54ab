#include "storage/volume_request.h"

#include <gtest/gtest.h>

namespace adapt::storage {
namespace {

using nlohmann::json;

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
  auto req = ParseCreateVolume(json{{"name", "data"}});
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->name, "data");
  EXPECT_EQ(req->size_mib, limits::kSizeMiBDefault);
}

TEST(CreateVolumeTest, ChecksSizeBounds) {
  EXPECT_TRUE(ParseCreateVolume(json{{"name", "d"}, {"sizeMiB", 64}}).ok());
  EXPECT_TRUE(ParseCreateVolume(json{{"name", "d"}, {"sizeMiB", 131072}}).ok());
  for (const json& size : {json(63), json(131073), json(-1), json(1.5), json("64"), json(true),
                           json(18446744073709551615ULL)}) {
    auto req = ParseCreateVolume(json{{"name", "d"}, {"sizeMiB", size}});
    ASSERT_FALSE(req.ok()) << size;
    EXPECT_EQ(req.status().field(), "sizeMiB");
  }
}

TEST(CreateVolumeTest, RefusesUnknownFieldsAndMissingNames) {
  EXPECT_EQ(ParseCreateVolume(json{{"name", "d"}, {"size", 64}}).status().field(), "size");
  EXPECT_EQ(ParseCreateVolume(json::object()).status().field(), "name");
  EXPECT_EQ(ParseCreateVolume(json{{"name", 5}}).status().field(), "name");
  EXPECT_FALSE(ParseCreateVolume(json::array()).ok());
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
