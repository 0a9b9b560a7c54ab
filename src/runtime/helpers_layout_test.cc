#include "runtime/helpers_layout.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::runtime {
namespace {

class HelpersLayoutTest : public testing::Test {
 protected:
  void SetUp() override {
    helpers_ = base_ + "/helpers";
    sandbox_ = base_ + "/sandboxes/sbx_1";
    ASSERT_TRUE(os::MakeDirs(helpers_, 0755).ok());
    ASSERT_TRUE(os::MakeDirs(sandbox_, 0700).ok());
    ASSERT_TRUE(os::WriteFileAtomic(helpers_ + "/adapt-agent", "agent v1", 0755).ok());
    ASSERT_TRUE(os::WriteFileAtomic(helpers_ + "/adapt-pause", "pause v1", 0755).ok());
  }

  os::TempDir tmp_{"helpers-layout-test"};
  const std::string base_ = tmp_.path();
  std::string helpers_, sandbox_;
};

TEST_F(HelpersLayoutTest, TheOwnLayoutPutsTheSocketBesideTheHelpersInOneMount) {
  HelpersView v = ViewOf(HelpersLayout::kOwn, sandbox_, helpers_);
  EXPECT_EQ(v.host_dir, sandbox_ + "/adapt");
  EXPECT_EQ(v.session_dir, "");
  EXPECT_EQ(v.host_socket, sandbox_ + "/adapt/agent.sock");
  EXPECT_EQ(v.socket_in_sandbox, "/.adapt/agent.sock");
}

TEST_F(HelpersLayoutTest, TheSharedLayoutKeepsTheSessionMountOfOlderSandboxes) {
  HelpersView v = ViewOf(HelpersLayout::kShared, sandbox_, helpers_);
  EXPECT_EQ(v.host_dir, helpers_);
  EXPECT_EQ(v.session_dir, sandbox_ + "/session");
  EXPECT_EQ(v.host_socket, sandbox_ + "/session/agent.sock");
  EXPECT_EQ(v.socket_in_sandbox, "/.adapt-session/agent.sock");
}

TEST_F(HelpersLayoutTest, PrepareLinksEveryHelperAndLeavesInstallsInProgressOut) {
  ASSERT_TRUE(os::WriteFileAtomic(helpers_ + "/adapt-statx.so.tmp", "half", 0755).ok());
  HelpersView v = ViewOf(HelpersLayout::kOwn, sandbox_, helpers_);
  Status st = PrepareOwnHelpers(v, helpers_, true);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(os::ListDir(v.host_dir), (std::vector<std::string>{"adapt-agent", "adapt-pause"}));
  EXPECT_TRUE(os::SameFile(helpers_ + "/adapt-agent", v.host_dir + "/adapt-agent"));
  EXPECT_TRUE(os::SameFile(helpers_ + "/adapt-pause", v.host_dir + "/adapt-pause"));
}

TEST_F(HelpersLayoutTest, AFreshBootTakesANewHelperAndARestoreKeepsTheOneItWasSavedWith) {
  HelpersView v = ViewOf(HelpersLayout::kOwn, sandbox_, helpers_);
  ASSERT_TRUE(PrepareOwnHelpers(v, helpers_, true).ok());
  // An adaptd upgrade installs a new agent (a new inode, as InstallHelper writes).
  ASSERT_TRUE(os::WriteFileAtomic(helpers_ + "/adapt-agent", "agent v2", 0755).ok());

  ASSERT_TRUE(PrepareOwnHelpers(v, helpers_, false).ok());
  EXPECT_EQ(*os::ReadFile(v.host_dir + "/adapt-agent"), "agent v1");

  ASSERT_TRUE(PrepareOwnHelpers(v, helpers_, true).ok());
  EXPECT_EQ(*os::ReadFile(v.host_dir + "/adapt-agent"), "agent v2");
  EXPECT_TRUE(os::SameFile(helpers_ + "/adapt-agent", v.host_dir + "/adapt-agent"));
}

TEST_F(HelpersLayoutTest, ARestoreStillLinksAHelperItLacks) {
  HelpersView v = ViewOf(HelpersLayout::kOwn, sandbox_, helpers_);
  ASSERT_TRUE(PrepareOwnHelpers(v, helpers_, false).ok());
  EXPECT_EQ(*os::ReadFile(v.host_dir + "/adapt-pause"), "pause v1");
}

TEST_F(HelpersLayoutTest, PrepareKeepsTheSocketThere) {
  HelpersView v = ViewOf(HelpersLayout::kOwn, sandbox_, helpers_);
  ASSERT_TRUE(PrepareOwnHelpers(v, helpers_, true).ok());
  ASSERT_TRUE(os::WriteFileAtomic(v.host_socket, "stands in for the socket", 0600).ok());
  ASSERT_TRUE(PrepareOwnHelpers(v, helpers_, true).ok());
  EXPECT_TRUE(os::Exists(v.host_socket));
}

TEST_F(HelpersLayoutTest, PrepareFailsWhenAHelperCannotBeLinked) {
  // A helper the sandbox directory cannot link to: linking a directory fails as linking
  // across filesystems does, with the helper's name.
  ASSERT_TRUE(os::MakeDirs(helpers_ + "/not-a-file", 0755).ok());
  Status st = PrepareOwnHelpers(ViewOf(HelpersLayout::kOwn, sandbox_, helpers_), helpers_, true);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not-a-file"), std::string::npos) << st.message();
}

TEST_F(HelpersLayoutTest, TheRecordSaysWhichLayoutAndNoRecordMeansShared) {
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kShared);
  ASSERT_TRUE(RecordHelpersLayout(sandbox_, HelpersLayout::kOwn).ok());
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kOwn);
  ASSERT_TRUE(RecordHelpersLayout(sandbox_, HelpersLayout::kShared).ok());
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kShared);
  ASSERT_TRUE(os::WriteFileAtomic(sandbox_ + "/helpers-layout", "garbage", 0600).ok());
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kShared);
}

TEST_F(HelpersLayoutTest, AFreshBootGetsItsOwnDirectoryAndRecordsIt) {
  auto v = PrepareHelpers(sandbox_, helpers_, std::nullopt);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->layout, HelpersLayout::kOwn);
  EXPECT_TRUE(os::SameFile(helpers_ + "/adapt-agent", sandbox_ + "/adapt/adapt-agent"));
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kOwn);
}

TEST_F(HelpersLayoutTest, AFreshBootWhoseHelpersCannotBeLinkedSharesThemAndRecordsThat) {
  ASSERT_TRUE(os::MakeDirs(helpers_ + "/not-a-file", 0755).ok());
  auto v = PrepareHelpers(sandbox_, helpers_, std::nullopt);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->layout, HelpersLayout::kShared);
  EXPECT_EQ(v->host_dir, helpers_);
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kShared);
}

TEST_F(HelpersLayoutTest, ARestoreTakesItsCheckpointsLayoutOrFails) {
  auto shared = PrepareHelpers(sandbox_, helpers_, HelpersLayout::kShared);
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  EXPECT_EQ(shared->layout, HelpersLayout::kShared);
  EXPECT_FALSE(os::Exists(sandbox_ + "/adapt"));
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kShared);

  // A checkpoint of the own layout cannot be restored onto the shared one.
  ASSERT_TRUE(os::MakeDirs(helpers_ + "/not-a-file", 0755).ok());
  auto own = PrepareHelpers(sandbox_, helpers_, HelpersLayout::kOwn);
  EXPECT_FALSE(own.ok());
  EXPECT_EQ(RecordedHelpersLayout(sandbox_), HelpersLayout::kShared);
}

}  // namespace
}  // namespace adapt::runtime
