#include "cli/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace adapt::cli {
namespace {

namespace fs = std::filesystem;

// Gives each test a private HOME, XDG_CONFIG_HOME and state dir, and restores the
// environment afterwards so tests do not see the developer's real config.
class ResolveClientConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* value = std::getenv(name);
      saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
      unsetenv(name);
    }
    std::string pattern = (fs::temp_directory_path() / "adapt-config-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "home");
    fs::create_directories(root_ / "state");
    setenv("HOME", (root_ / "home").c_str(), 1);
    setenv("ADAPT_STATE_DIR", (root_ / "state").c_str(), 1);
  }

  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    fs::remove_all(root_);
  }

  void WriteFile(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  ClientConfig MustResolve(const ConfigFlags& flags = {}) {
    Result<ClientConfig> config = ResolveClientConfig(flags);
    EXPECT_TRUE(config.ok()) << config.status().message();
    return config.ok() ? *config : ClientConfig();
  }

  static constexpr const char* kVariables[] = {"ADAPT_URL", "ADAPT_API_KEY", "XDG_CONFIG_HOME",
                                               "HOME", "ADAPT_STATE_DIR"};
  std::map<std::string, std::optional<std::string>> saved_;
  fs::path root_;
};

TEST_F(ResolveClientConfigTest, DefaultsToLocalhostAndNoKey) {
  ClientConfig config = MustResolve();
  EXPECT_EQ(config.url, "http://127.0.0.1:8080");
  EXPECT_EQ(config.api_key, "");
}

TEST_F(ResolveClientConfigTest, ReadsTheAdminKeyFromTheStateDirAsLastResort) {
  WriteFile(root_ / "state" / "admin.key", "adapt_admin123\n");
  EXPECT_EQ(MustResolve().api_key, "adapt_admin123");
}

// The local admin key is for the local adaptd: never sent to a URL naming another host.
TEST_F(ResolveClientConfigTest, TheLocalAdminKeyGoesOnlyToALoopbackUrl) {
  WriteFile(root_ / "state" / "admin.key", "adapt_admin123\n");
  for (const char* local : {"http://localhost:9000", "http://[::1]:8080/", "http://127.0.0.2"}) {
    setenv("ADAPT_URL", local, 1);
    EXPECT_EQ(MustResolve().api_key, "adapt_admin123") << local;
  }
  for (const char* remote :
       {"https://remote.example", "http://127.evil.example:8080", "http://10.0.0.1"}) {
    setenv("ADAPT_URL", remote, 1);
    EXPECT_EQ(MustResolve().api_key, "") << remote;
  }
}

TEST_F(ResolveClientConfigTest, ConfigFileUnderHomeBeatsDefaults) {
  WriteFile(root_ / "state" / "admin.key", "adapt_admin\n");
  WriteFile(root_ / "home/.config/adapt/config.json",
            R"({"url":"http://file:1","apiKey":"from-file"})");
  ClientConfig config = MustResolve();
  EXPECT_EQ(config.url, "http://file:1");
  EXPECT_EQ(config.api_key, "from-file");
}

TEST_F(ResolveClientConfigTest, XdgConfigHomeReplacesHomeDotConfig) {
  setenv("XDG_CONFIG_HOME", (root_ / "xdg").c_str(), 1);
  WriteFile(root_ / "home/.config/adapt/config.json", R"({"url":"http://home:1"})");
  WriteFile(root_ / "xdg/adapt/config.json", R"({"url":"http://xdg:1"})");
  EXPECT_EQ(ConfigFilePath(), (root_ / "xdg/adapt/config.json").string());
  EXPECT_EQ(MustResolve().url, "http://xdg:1");
}

TEST_F(ResolveClientConfigTest, EnvironmentBeatsConfigFile) {
  WriteFile(root_ / "home/.config/adapt/config.json",
            R"({"url":"http://file:1","apiKey":"from-file"})");
  setenv("ADAPT_URL", "http://env:2", 1);
  setenv("ADAPT_API_KEY", "from-env", 1);
  ClientConfig config = MustResolve();
  EXPECT_EQ(config.url, "http://env:2");
  EXPECT_EQ(config.api_key, "from-env");
}

TEST_F(ResolveClientConfigTest, FlagsBeatEnvironment) {
  setenv("ADAPT_URL", "http://env:2", 1);
  setenv("ADAPT_API_KEY", "from-env", 1);
  ClientConfig config = MustResolve({.url = "http://flag:3/", .api_key = "from-flag"});
  EXPECT_EQ(config.url, "http://flag:3");
  EXPECT_EQ(config.api_key, "from-flag");
}

TEST_F(ResolveClientConfigTest, EachFieldComesFromItsOwnFirstSource) {
  WriteFile(root_ / "home/.config/adapt/config.json",
            R"({"url":"http://file:1","apiKey":"from-file"})");
  setenv("ADAPT_URL", "http://env:2", 1);
  ClientConfig config = MustResolve();
  EXPECT_EQ(config.url, "http://env:2");
  EXPECT_EQ(config.api_key, "from-file");
}

TEST_F(ResolveClientConfigTest, MalformedConfigFileIsAnErrorNamingIt) {
  WriteFile(root_ / "home/.config/adapt/config.json", "{not json");
  Result<ClientConfig> config = ResolveClientConfig({});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("config.json"), std::string::npos);
}

TEST_F(ResolveClientConfigTest, ConfigFileIsNotReadWhenFlagsSetEverything) {
  WriteFile(root_ / "home/.config/adapt/config.json", "{not json");
  EXPECT_TRUE(ResolveClientConfig({.url = "http://a:1", .api_key = "k"}).ok());
}

}  // namespace
}  // namespace adapt::cli
