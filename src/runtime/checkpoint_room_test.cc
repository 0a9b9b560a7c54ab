#include "runtime/checkpoint_room.h"

#include <gtest/gtest.h>

#include "os/temp_dir.h"

namespace adapt::runtime {
namespace {

constexpr uint64_t kGib = 1ull << 30;

TEST(CheckpointRoom, ACheckpointNeedsItsBytesAndTheMarginFree) {
  uint64_t free = 5 * kGib;
  CheckpointRoom room([&]() -> Result<uint64_t> { return free; });
  auto fits = room.Reserve(4 * kGib, "a checkpoint of sandbox sbx_a");
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  fits->reset();
  auto over = room.Reserve(4 * kGib + 1, "a checkpoint of sandbox sbx_a");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kUnavailable);
  const std::string& why = over.status().message();
  EXPECT_NE(why.find("a checkpoint of sandbox sbx_a needs 5.0 GiB free"), std::string::npos) << why;
  // The host's free space is not the tenant's to learn.
  EXPECT_EQ(why.find("has 5"), std::string::npos) << why;
  EXPECT_EQ(room.reserved(), 0u);
}

TEST(CheckpointRoom, CheckpointsUnderWayDoNotCountTheSameFreeSpaceTwice) {
  CheckpointRoom room([]() -> Result<uint64_t> { return 10 * kGib; });
  auto first = room.Reserve(6 * kGib, "a checkpoint of sandbox sbx_a");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(room.reserved(), 6 * kGib);
  auto second = room.Reserve(6 * kGib, "a checkpoint of sandbox sbx_b");
  ASSERT_FALSE(second.ok());
  // Another tenant's checkpoint under way is not named in the answer either.
  EXPECT_EQ(second.status().message().find("held for other checkpoints"), std::string::npos)
      << second.status().message();
  // Once the first ends, its room is free again.
  first->reset();
  EXPECT_EQ(room.reserved(), 0u);
  EXPECT_TRUE(room.Reserve(6 * kGib, "a checkpoint of sandbox sbx_b").ok());
}

TEST(CheckpointRoom, AFreeSpaceThatCannotBeReadIsAnErrorWithContext) {
  CheckpointRoom room([]() -> Result<uint64_t> { return Internal("statvfs failed"); });
  auto refused = room.Reserve(1, "a checkpoint of sandbox sbx_a");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("statvfs failed"), std::string::npos);
  EXPECT_NE(refused.status().message().find("sbx_a"), std::string::npos);
  EXPECT_EQ(room.reserved(), 0u);
}

TEST(CheckpointFreeBytes, ReadsTheStateDirectorysFilesystem) {
  os::TempDir dir("checkpoint-room");
  auto free = CheckpointFreeBytes(dir.path());
  ASSERT_TRUE(free.ok()) << free.status().message();
  EXPECT_GT(*free, 0u);
  EXPECT_FALSE(CheckpointFreeBytes(dir.path() + "/missing").ok());
}

}  // namespace
}  // namespace adapt::runtime
