#include "daemon/paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "base/client_message.h"
#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::daemon {
namespace {

ListenAddress MustParse(const std::string& text) {
  auto a = ParseListenAddress(text);
  EXPECT_TRUE(a.ok()) << text << ": " << a.status().message();
  return a.ok() ? *a : ListenAddress{};
}

TEST(ParseListenAddress, HostAndPort) {
  ListenAddress a = MustParse("127.0.0.1:8080");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8080);
  a = MustParse("localhost:65535");
  EXPECT_EQ(a.host, "localhost");
  EXPECT_EQ(a.port, 65535);
  a = MustParse("0.0.0.0:0");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 0) << "port 0 picks a free one";
}

TEST(ParseListenAddress, BracketedIpv6) {
  ListenAddress a = MustParse("[::1]:80");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 80);
  a = MustParse("[fe80::1:2]:8443");
  EXPECT_EQ(a.host, "fe80::1:2");
  EXPECT_EQ(a.port, 8443);
}

TEST(ParseListenAddress, BadAddressesNameTheListenField) {
  for (const char* bad : {"", "8080", "localhost", ":80", "host:", "host:http", "host:80x",
                          "host:-1", "host:65536", "host:99999999", "[::1]", "host: 80", "::1"}) {
    auto a = ParseListenAddress(bad);
    ASSERT_FALSE(a.ok()) << "'" << bad << "' was accepted";
    EXPECT_EQ(a.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(a.status().field(), "listen") << bad;
  }
}

class InstallHelpersTest : public testing::Test {
 protected:
  void SetUp() override {
    libexec_ = dir_ + "/libexec";
    ASSERT_TRUE(os::MakeDirs(libexec_).ok());
    ASSERT_TRUE(
        os::WriteFileAtomic(libexec_ + "/adapt-shim", "#!/bin/sh\n# dummy shim\n", 0755).ok());
    // Deliberately not executable: the installed copy must be 0755 whatever the source was.
    ASSERT_TRUE(os::WriteFileAtomic(libexec_ + "/adapt-pause", "dummy pause v1", 0600).ok());
    ASSERT_TRUE(os::WriteFileAtomic(libexec_ + "/adapt-agent", "dummy agent v1", 0600).ok());
    config_.state_dir = dir_ + "/state";
    config_.libexec_dir = libexec_;
  }

  static int ModeOf(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return -1;
    return static_cast<int>(st.st_mode & 07777);
  }

  os::TempDir tmp_{"paths-test"};
  const std::string dir_ = tmp_.path();
  std::string libexec_;
  DaemonConfig config_;
};

TEST_F(InstallHelpersTest, CopiesPauseAndAgentIntoStateHelpersWithMode0755) {
  auto h = InstallHelpers(config_);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->shim, std::filesystem::canonical(libexec_).string() + "/adapt-shim");
  EXPECT_EQ(h->helpers_dir, config_.state_dir + "/helpers");

  std::string installed = h->helpers_dir + "/adapt-pause";
  auto text = os::ReadFile(installed);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "dummy pause v1");
  EXPECT_EQ(ModeOf(installed), 0755);
  EXPECT_EQ(*os::ReadFile(h->helpers_dir + "/adapt-agent"), "dummy agent v1");
  EXPECT_EQ(ModeOf(h->helpers_dir + "/adapt-agent"), 0755);
  // Every sandbox sees this directory: nothing else may be in it (no shim, no temp file).
  EXPECT_EQ(os::ListDir(h->helpers_dir), (std::vector<std::string>{"adapt-agent", "adapt-pause"}));
  // The source stays where it was.
  EXPECT_TRUE(os::Exists(libexec_ + "/adapt-pause"));
}

TEST_F(InstallHelpersTest, ReinstallingReplacesAnOlderCopy) {
  ASSERT_TRUE(InstallHelpers(config_).ok());
  ASSERT_TRUE(os::WriteFileAtomic(libexec_ + "/adapt-pause", "dummy pause v2", 0755).ok());
  auto h = InstallHelpers(config_);
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(*os::ReadFile(h->helpers_dir + "/adapt-pause"), "dummy pause v2");
  EXPECT_EQ(ModeOf(h->helpers_dir + "/adapt-pause"), 0755);
  EXPECT_EQ(os::ListDir(h->helpers_dir), (std::vector<std::string>{"adapt-agent", "adapt-pause"}));
}

TEST_F(InstallHelpersTest, AnUnchangedHelperKeepsItsInodeAcrossRestarts) {
  // Running sandboxes map these files; a new inode under them breaks their checkpoint.
  ASSERT_TRUE(InstallHelpers(config_).ok());
  auto inode = [&](const char* name) {
    struct stat st {};
    EXPECT_EQ(::stat((config_.state_dir + "/helpers/" + name).c_str(), &st), 0) << name;
    return st.st_ino;
  };
  ino_t agent = inode("adapt-agent"), pause = inode("adapt-pause");
  ASSERT_TRUE(os::WriteFileAtomic(libexec_ + "/adapt-pause", "dummy pause v2", 0755).ok());
  ASSERT_TRUE(InstallHelpers(config_).ok());
  EXPECT_EQ(inode("adapt-agent"), agent) << "the same bytes were installed again";
  EXPECT_NE(inode("adapt-pause"), pause) << "a changed helper is replaced";
}

TEST_F(InstallHelpersTest, LibexecDirWinsOverTheBinaryDirectory) {
  // build/bin (beside this test) has real helpers too; the configured directory comes first.
  auto h = InstallHelpers(config_);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(std::filesystem::path(h->shim).parent_path(), std::filesystem::canonical(libexec_));
}

TEST_F(InstallHelpersTest, ARecordedFailureNamingWhereTheHelpersOrCgroupsAreIsNotShownToTheTenant) {
  config_.images_dir = dir_ + "/images";
  auto h = InstallHelpers(config_);
  ASSERT_TRUE(h.ok()) << h.status().message();
  SetHostDirectoriesForMessages(HostDirectoriesForMessages(config_, *h));
  for (const std::string& message : std::vector<std::string>{
           h->shim + " exited with status 1",
           "writing /sys/fs/cgroup/cpu/adapt/sbx_x/cpu.cfs_quota_us",
           "opening /run/netns/adapt-sbx_x: no such file", config_.images_dir + "/layers/x: gone",
           config_.state_dir + "/sandboxes/sbx_x/config.json: truncated"}) {
    const std::string recorded = RecordMessage(Internal(message));
    EXPECT_EQ(recorded.find(message), std::string::npos) << recorded;
    EXPECT_NE(recorded.find("reference err_"), std::string::npos) << recorded;
  }
  // The tenant's own paths (inside its sandbox) stay in what it reads.
  const std::string own = "startup command not found: /workspace/run.sh";
  EXPECT_EQ(RecordMessage(Internal(own)), own);
  SetHostDirectoriesForMessages({});
}

}  // namespace
}  // namespace adapt::daemon
