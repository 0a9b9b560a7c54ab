#include "runtime/shim_state.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "os/files.h"

namespace adapt::runtime {
namespace {

class ShimStateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/shim-state-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)os::RemoveTree(dir_); }  // best effort
  std::string dir_;
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

}  // namespace
}  // namespace adapt::runtime
