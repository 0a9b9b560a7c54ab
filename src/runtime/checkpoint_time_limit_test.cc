#include "runtime/checkpoint_time_limit.h"

#include <gtest/gtest.h>

#include "os/files.h"
#include "os/temp_dir.h"
#include "runtime/sandbox_spec_files.h"

namespace adapt::runtime {
namespace {

using std::chrono::seconds;

TEST(CheckpointTimeLimit, TwoMinutesPlusOneForEachGibOrPartOfOne) {
  EXPECT_EQ(CheckpointTimeLimit(0), seconds(120));
  EXPECT_EQ(CheckpointTimeLimit(512ull << 20), seconds(180));
  EXPECT_EQ(CheckpointTimeLimit(1ull << 30), seconds(180));
  EXPECT_EQ(CheckpointTimeLimit((1ull << 30) + 1), seconds(240));
  EXPECT_EQ(CheckpointTimeLimit(16ull << 30), seconds(120 + 16 * 60));
}

TEST(CheckpointTimeLimit, AnUnknownMemoryGetsTheLimitOfSixteenGib) {
  EXPECT_EQ(CheckpointTimeLimit(kCheckpointUnknownMemoryBytes), seconds(18 * 60));
}

// The limit of a checkpoint is read back from the sandbox's config.json, as Launch wrote it.
TEST(CheckpointTimeLimit, TheMemoryLimitIsReadBackFromTheSandboxsSpec) {
  os::TempDir dir("checkpoint-time");
  SandboxSpec spec;
  spec.id = "sbx_0123456789abcdef";
  spec.process.argv = {"/bin/sh"};
  spec.memory_mib = 3072;
  ASSERT_TRUE(WriteSpecFiles(dir.path(), spec, {}).ok());
  auto memory = ReadMemoryLimit(dir.path(), spec.id);
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(*memory, 3072ull << 20);
  EXPECT_EQ(CheckpointTimeLimit(*memory), seconds(120 + 3 * 60));
  ASSERT_TRUE(
      os::WriteFileAtomic(dir.path() + "/config.json", R"({"linux": {"resources": 1}})").ok());
  EXPECT_FALSE(ReadMemoryLimit(dir.path(), spec.id).ok());
}

}  // namespace
}  // namespace adapt::runtime
