#include "runtime/shim_state.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::runtime {
namespace {

class ShimStateFiles : public ::testing::Test {
 protected:
  os::TempDir tmp_{"shim-state-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(ShimStateFiles, AnOomKillSurvivesTheRoundTrip) {
  ShimState s;
  s.phase = ShimPhase::kExited;
  s.exit_code = 137;
  s.signal = 9;
  s.oom_killed = true;
  ASSERT_TRUE(WriteShimState(dir_, s).ok());
  auto read = ReadShimState(dir_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->phase, ShimPhase::kExited);
  EXPECT_EQ(read->signal, 9);
  EXPECT_TRUE(read->oom_killed);
}

TEST_F(ShimStateFiles, AStateFromAnOlderShimIsNoOomKill) {
  // Shims started before the field existed still run after an upgrade of adaptd.
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/" + kShimStateFile,
                                  R"({"phase":"exited","exitCode":137,"signal":9})")
                  .ok());
  auto read = ReadShimState(dir_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->exit_code, 137);
  EXPECT_FALSE(read->oom_killed);
}

TEST_F(ShimStateFiles, TheBootSettingsSurviveTheRoundTrip) {
  ShimConfig c;
  c.runsc = "runsc";
  c.container_id = "sbx_1";
  c.bundle = dir_;
  c.cpu_quota_us = 200000;
  c.cpu_period_us = 100000;
  c.idle_init = true;
  c.agent_in_init = true;
  ASSERT_TRUE(WriteShimConfig(dir_, c).ok());
  auto read = ReadShimConfig(dir_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->cpu_quota_us, 200000);
  EXPECT_EQ(read->cpu_period_us, 100000);
  EXPECT_TRUE(read->idle_init);
  EXPECT_TRUE(read->agent_in_init);
}

TEST_F(ShimStateFiles, AConfigFromAnOlderAdaptdBootsAsBefore) {
  // Written by an adaptd before the fields: its spec carries the CPU limit, for runsc to set,
  // and the shim starts the agent.
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/" + kShimConfigFile,
                                  R"({"runsc":"runsc","globalFlags":[],"containerId":"sbx_1",)"
                                  R"("bundle":"/b"})")
                  .ok());
  auto read = ReadShimConfig(dir_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->cpu_quota_us, 0);
  EXPECT_FALSE(read->idle_init);
  EXPECT_FALSE(read->agent_in_init);
}

}  // namespace
}  // namespace adapt::runtime
