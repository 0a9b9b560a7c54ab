#include "daemon/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::daemon {
namespace {

constexpr const char* kEnvNames[] = {"ADAPT_LISTEN",
                                     "ADAPT_STATE_DIR",
                                     "ADAPT_IMAGES_DIR",
                                     "ADAPT_DEFAULT_IMAGE",
                                     "ADAPT_RUNSC",
                                     "ADAPT_WARM_POOLS",
                                     "ADAPT_ALLOW_REGISTRIES",
                                     "ADAPT_TRUSTED_IMAGE_SOURCES",
                                     "ADAPT_DEVELOPER_PUBLIC_IMAGES",
                                     "ADAPT_IMAGE_POLICY",
                                     "ADAPT_ALLOW_SIGNUP",
                                     "ADAPT_DATABASE_ADMIN_URL"};

class ConfigTest : public testing::Test {
 protected:
  void SetUp() override {
    // The tests own the ADAPT_* environment; put back whatever the caller had.
    for (const char* name : kEnvNames) {
      const char* v = std::getenv(name);
      if (v) saved_[name] = v;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kEnvNames) {
      ::unsetenv(name);
      if (saved_.count(name)) ::setenv(name, saved_[name].c_str(), 1);
    }
  }

  static Result<DaemonConfig> Load(std::vector<std::string> args) {
    args.insert(args.begin(), "adaptd");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return LoadConfig(static_cast<int>(args.size()), argv.data());
  }

  static DaemonConfig MustLoad(std::vector<std::string> args) {
    auto c = Load(std::move(args));
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? *c : DaemonConfig{};
  }

  std::string WriteConfig(const std::string& text) {
    std::string path = dir_ + "/adaptd.json";
    EXPECT_TRUE(os::WriteFileAtomic(path, text).ok());
    return path;
  }

  std::map<std::string, std::string> saved_;
  os::TempDir tmp_{"config-test"};
  const std::string dir_ = tmp_.path();
};

TEST_F(ConfigTest, DefaultsWithoutFlagsEnvOrFile) {
  DaemonConfig c = MustLoad({});
  EXPECT_EQ(c.listen, "127.0.0.1:8080");
  EXPECT_EQ(c.state_dir, "/var/lib/adapt");
  EXPECT_EQ(c.images_dir, "/var/lib/adapt/images");
  EXPECT_EQ(c.default_image, "debian:12");
  EXPECT_EQ(c.runsc, "runsc");
  EXPECT_EQ(c.libexec_dir, "");
  EXPECT_EQ(c.io_threads, 2);
  EXPECT_EQ(c.worker_threads, 8);
  EXPECT_EQ(c.max_body_bytes, size_t{1} << 20);
}

TEST_F(ConfigTest, EnvironmentOverridesDefaults) {
  ::setenv("ADAPT_LISTEN", "0.0.0.0:9000", 1);
  ::setenv("ADAPT_STATE_DIR", "/srv/adapt", 1);
  ::setenv("ADAPT_DEFAULT_IMAGE", "python:3.12-slim", 1);
  ::setenv("ADAPT_RUNSC", "/opt/runsc", 1);
  DaemonConfig c = MustLoad({});
  EXPECT_EQ(c.listen, "0.0.0.0:9000");
  EXPECT_EQ(c.state_dir, "/srv/adapt");
  EXPECT_EQ(c.images_dir, "/srv/adapt/images") << "images follow the state directory";
  EXPECT_EQ(c.default_image, "python:3.12-slim");
  EXPECT_EQ(c.runsc, "/opt/runsc");

  ::setenv("ADAPT_IMAGES_DIR", "/mnt/images", 1);
  EXPECT_EQ(MustLoad({}).images_dir, "/mnt/images");
}

TEST_F(ConfigTest, EmptyEnvironmentValuesAreIgnored) {
  ::setenv("ADAPT_LISTEN", "", 1);
  ::setenv("ADAPT_STATE_DIR", "", 1);
  DaemonConfig c = MustLoad({});
  EXPECT_EQ(c.listen, "127.0.0.1:8080");
  EXPECT_EQ(c.state_dir, "/var/lib/adapt");
}

TEST_F(ConfigTest, FlagsOverrideEnvironment) {
  ::setenv("ADAPT_LISTEN", "0.0.0.0:9000", 1);
  ::setenv("ADAPT_STATE_DIR", "/srv/adapt", 1);
  ::setenv("ADAPT_IMAGES_DIR", "/mnt/images", 1);
  ::setenv("ADAPT_DEFAULT_IMAGE", "python:3.12-slim", 1);
  ::setenv("ADAPT_RUNSC", "/opt/runsc", 1);
  DaemonConfig c = MustLoad({"--listen", "127.0.0.1:0", "--state-dir", "/tmp/st", "--images-dir",
                             "/tmp/img", "--default-image", "alpine:3", "--runsc", "/usr/bin/runsc",
                             "--libexec-dir", "/usr/libexec/adapt", "--worker-threads", "16"});
  EXPECT_EQ(c.listen, "127.0.0.1:0");
  EXPECT_EQ(c.state_dir, "/tmp/st");
  EXPECT_EQ(c.images_dir, "/tmp/img");
  EXPECT_EQ(c.default_image, "alpine:3");
  EXPECT_EQ(c.runsc, "/usr/bin/runsc");
  EXPECT_EQ(c.libexec_dir, "/usr/libexec/adapt");
  EXPECT_EQ(c.worker_threads, 16);
}

TEST_F(ConfigTest, WarmPoolsAreOffByDefaultAndComeFromEnvOrRepeatedFlags) {
  EXPECT_TRUE(MustLoad({}).warm_pools.empty());
  ::setenv("ADAPT_WARM_POOLS", "debian:12=2;debian:12=1,cpu=2", 1);
  EXPECT_EQ(MustLoad({}).warm_pools, std::vector<std::string>{"debian:12=2;debian:12=1,cpu=2"});
  DaemonConfig c = MustLoad({"--warm-pool", "debian:12=1", "--warm-pool", "alpine:3=2,cpu=2"});
  EXPECT_EQ(c.warm_pools, (std::vector<std::string>{"debian:12=1", "alpine:3=2,cpu=2"}));
}

TEST_F(ConfigTest, NoRegistryIsAllowedOnPrivateAddressesUnlessListed) {
  EXPECT_TRUE(MustLoad({}).allowed_registries.empty());
  ::setenv("ADAPT_ALLOW_REGISTRIES", "127.0.0.1,registry.internal:5000", 1);
  EXPECT_EQ(MustLoad({}).allowed_registries,
            (std::vector<std::string>{"127.0.0.1", "registry.internal:5000"}));
  DaemonConfig c =
      MustLoad({"--allow-registry", "127.0.0.1:5000", "--allow-registry", "[::1]:5000"});
  EXPECT_EQ(c.allowed_registries, (std::vector<std::string>{"127.0.0.1:5000", "[::1]:5000"}));
}

TEST_F(ConfigTest, TrustedImageSourcesDefaultToOfficialImagesWithPublicImagesOffAndRestOpen) {
  DaemonConfig d = MustLoad({});
  EXPECT_EQ(d.trusted_image_sources, std::vector<std::string>{"docker.io/library/*"});
  EXPECT_FALSE(d.developer_public_images);
  EXPECT_EQ(d.image_policy, "open");
  ::setenv("ADAPT_TRUSTED_IMAGE_SOURCES", "ghcr.io/acme/*,mathworks/matlab", 1);
  ::setenv("ADAPT_DEVELOPER_PUBLIC_IMAGES", "true", 1);
  DaemonConfig e = MustLoad({});
  EXPECT_EQ(e.trusted_image_sources,
            (std::vector<std::string>{"ghcr.io/acme/*", "mathworks/matlab"}));
  EXPECT_TRUE(e.developer_public_images);
  DaemonConfig f = MustLoad({"--trusted-image-source", "quay.io/*", "--developer-public-images",
                             "false", "--image-policy", "assistant"});
  EXPECT_EQ(f.trusted_image_sources, std::vector<std::string>{"quay.io/*"});
  EXPECT_FALSE(f.developer_public_images);
  EXPECT_EQ(f.image_policy, "assistant");
  ::unsetenv("ADAPT_TRUSTED_IMAGE_SOURCES");  // the environment wins over the file
  ::unsetenv("ADAPT_DEVELOPER_PUBLIC_IMAGES");
  DaemonConfig g = MustLoad({"--config", WriteConfig(R"({"trustedImageSources": ["a.io/*"],
      "developerPublicImages": true, "imagePolicy": "assistant"})")});
  EXPECT_EQ(g.trusted_image_sources, std::vector<std::string>{"a.io/*"});
  EXPECT_TRUE(g.developer_public_images);
  EXPECT_EQ(g.image_policy, "assistant");
  EXPECT_FALSE(Load({"--image-policy", "closed"}).ok());
}

TEST_F(ConfigTest, SignUpIsOffUnlessTheOperatorTurnsItOn) {
  EXPECT_FALSE(MustLoad({}).allow_signup);
  EXPECT_TRUE(MustLoad({"--allow-signup"}).allow_signup);
  ::setenv("ADAPT_ALLOW_SIGNUP", "1", 1);
  EXPECT_TRUE(MustLoad({}).allow_signup);
}

TEST_F(ConfigTest, FlagEqualsFormWorks) {
  DaemonConfig c = MustLoad({"--state-dir=/tmp/eq"});
  EXPECT_EQ(c.state_dir, "/tmp/eq");
  EXPECT_EQ(c.images_dir, "/tmp/eq/images");
}

TEST_F(ConfigTest, ConfigFileKeysAreRead) {
  std::string path = WriteConfig(R"({"listen": "10.0.0.1:7000", "stateDir": "/data/adapt",
      "defaultImage": "ubuntu:24.04", "runsc": "/bin/runsc", "libexecDir": "/le",
      "ioThreads": 4, "workerThreads": 12, "maxBodyBytes": 4096})");
  DaemonConfig c = MustLoad({"--config", path});
  EXPECT_EQ(c.listen, "10.0.0.1:7000");
  EXPECT_EQ(c.state_dir, "/data/adapt");
  EXPECT_EQ(c.images_dir, "/data/adapt/images");
  EXPECT_EQ(c.default_image, "ubuntu:24.04");
  EXPECT_EQ(c.runsc, "/bin/runsc");
  EXPECT_EQ(c.libexec_dir, "/le");
  EXPECT_EQ(c.io_threads, 4);
  EXPECT_EQ(c.worker_threads, 12);
  EXPECT_EQ(c.max_body_bytes, 4096u);
  EXPECT_EQ(MustLoad({"--config", WriteConfig(R"({"imagesDir": "/imgs"})")}).images_dir, "/imgs");
}

TEST_F(ConfigTest, EnvironmentOverridesTheFileAndFlagsOverrideBoth) {
  std::string path = WriteConfig(R"({"listen": "10.0.0.1:7000", "stateDir": "/from/file",
      "runsc": "/file/runsc", "workerThreads": 12})");
  ::setenv("ADAPT_STATE_DIR", "/from/env", 1);
  ::setenv("ADAPT_RUNSC", "/env/runsc", 1);
  DaemonConfig c = MustLoad({"--config", path, "--runsc", "/flag/runsc", "--worker-threads", "3"});
  EXPECT_EQ(c.listen, "10.0.0.1:7000");
  EXPECT_EQ(c.state_dir, "/from/env");
  EXPECT_EQ(c.images_dir, "/from/env/images");
  EXPECT_EQ(c.runsc, "/flag/runsc");
  EXPECT_EQ(c.worker_threads, 3);
}

TEST_F(ConfigTest, PerOrganizationCapsAndMcpThreadsHaveDefaultsFlagsAndKeys) {
  DaemonConfig d = MustLoad({});
  EXPECT_EQ(d.max_sandboxes_per_org, 50);
  EXPECT_EQ(d.max_images_per_org, 100);
  EXPECT_EQ(d.max_imports_per_org, 4);
  EXPECT_EQ(d.mcp_call_threads, 16);
  DaemonConfig c = MustLoad({"--max-sandboxes-per-org", "3", "--max-images-per-org", "0",
                             "--max-imports-per-org", "1", "--mcp-call-threads", "2"});
  EXPECT_EQ(c.max_sandboxes_per_org, 3);
  EXPECT_EQ(c.max_images_per_org, 0);
  EXPECT_EQ(c.max_imports_per_org, 1);
  EXPECT_EQ(c.mcp_call_threads, 2);
  EXPECT_EQ(
      MustLoad({"--config", WriteConfig(R"({"maxSandboxesPerOrg": 7})")}).max_sandboxes_per_org, 7);
  EXPECT_EQ(d.database_max_sessions, 0);
  EXPECT_EQ(MustLoad({"--database-max-sessions", "40"}).database_max_sessions, 40);
  EXPECT_EQ(
      MustLoad({"--config", WriteConfig(R"({"databaseMaxSessions": 9})")}).database_max_sessions,
      9);
  auto negative = Load({"--database-max-sessions", "-1"});
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().field(), "databaseMaxSessions");
  auto bad = Load({"--max-sandboxes-per-org", "-1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "maxSandboxesPerOrg");
  EXPECT_FALSE(Load({"--mcp-call-threads", "0"}).ok());
}

TEST_F(ConfigTest, UnknownConfigKeyIsAnError) {
  auto c = Load({"--config", WriteConfig(R"({"listen": "127.0.0.1:1", "stateDirectory": "/x"})")});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("stateDirectory"), std::string::npos) << c.status().message();
}

TEST_F(ConfigTest, BadConfigFilesAreErrors) {
  EXPECT_FALSE(Load({"--config", WriteConfig("not json")}).ok());
  EXPECT_FALSE(Load({"--config", WriteConfig("[1, 2]")}).ok());
  EXPECT_FALSE(Load({"--config", WriteConfig(R"({"listen": 8080})")}).ok()) << "wrong type";
  EXPECT_FALSE(Load({"--config", WriteConfig(R"({"workerThreads": "many"})")}).ok());
  auto missing = Load({"--config", dir_ + "/missing.json"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

TEST_F(ConfigTest, WorkerThreadsMustBeANumberInRange) {
  for (const char* bad : {"abc", "1", "0", "-4", "257", "2.5"}) {
    auto c = Load({"--worker-threads", bad});
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(MustLoad({"--worker-threads", "2"}).worker_threads, 2);
  EXPECT_EQ(MustLoad({"--worker-threads", "256"}).worker_threads, 256);
  EXPECT_FALSE(Load({"--config", WriteConfig(R"({"workerThreads": 1})")}).ok())
      << "the file is held to the same range";
}

TEST_F(ConfigTest, UnknownFlagsAndStrayArgumentsAreErrors) {
  EXPECT_FALSE(Load({"--no-such-flag"}).ok());
  EXPECT_FALSE(Load({"stray"}).ok());
  EXPECT_FALSE(Load({"--listen"}).ok()) << "a flag without its value";
}

TEST_F(ConfigTest, HelpReturnsTheUsageText) {
  auto c = Load({"--help"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  EXPECT_NE(c.status().message().find("--state-dir"), std::string::npos) << c.status().message();
}

TEST_F(ConfigTest, ObjectQuotaAndMultipartAgeFromFlagsAndFile) {
  DaemonConfig defaults = MustLoad({});
  EXPECT_EQ(defaults.object_quota_bytes, 50ull << 30);
  EXPECT_EQ(defaults.multipart_max_age_seconds, 86400);
  DaemonConfig c = MustLoad({"--object-quota-bytes", "1000", "--multipart-max-age", "2"});
  EXPECT_EQ(c.object_quota_bytes, 1000u);
  EXPECT_EQ(c.multipart_max_age_seconds, 2);
  c = MustLoad(
      {"--config", WriteConfig(R"({"objectQuotaBytes": 0, "multipartMaxAgeSeconds": 60})")});
  EXPECT_EQ(c.object_quota_bytes, 0u);
  EXPECT_EQ(c.multipart_max_age_seconds, 60);
  for (const char* bad : {"0", "-1", "2592001", "x"})
    EXPECT_FALSE(Load({"--multipart-max-age", bad}).ok()) << bad;
}

TEST_F(ConfigTest, TheAppReleaseGraceHasADefaultAFlagAKeyAndARange) {
  EXPECT_EQ(MustLoad({}).app_release_grace_seconds, 3600);
  EXPECT_EQ(MustLoad({"--app-release-grace-seconds", "0"}).app_release_grace_seconds, 0);
  EXPECT_EQ(MustLoad({"--config", WriteConfig(R"({"appReleaseGraceSeconds": 5})")})
                .app_release_grace_seconds,
            5);
  for (const char* bad : {"-1", "2592001", "x"})
    EXPECT_FALSE(Load({"--app-release-grace-seconds", bad}).ok()) << bad;
}

TEST_F(ConfigTest, TheDatabaseQuotaIntervalHasADefaultAFlagAKeyAndARange) {
  EXPECT_EQ(MustLoad({}).database_quota_interval_seconds, 30);
  EXPECT_EQ(MustLoad({"--database-quota-interval-seconds", "1"}).database_quota_interval_seconds,
            1);
  EXPECT_EQ(MustLoad({"--config", WriteConfig(R"({"databaseQuotaIntervalSeconds": 3600})")})
                .database_quota_interval_seconds,
            3600);
  for (const char* bad : {"0", "-1", "3601", "x"})
    EXPECT_FALSE(Load({"--database-quota-interval-seconds", bad}).ok()) << bad;
}

TEST_F(ConfigTest, TheRunCancelGraceHasADefaultAFlagAKeyAndARange) {
  EXPECT_EQ(MustLoad({}).run_cancel_grace_seconds, 10);
  EXPECT_EQ(MustLoad({"--run-cancel-grace-seconds", "1"}).run_cancel_grace_seconds, 1);
  EXPECT_EQ(MustLoad({"--config", WriteConfig(R"({"runCancelGraceSeconds": 300})")})
                .run_cancel_grace_seconds,
            300);
  for (const char* bad : {"0", "-1", "301", "x"})
    EXPECT_FALSE(Load({"--run-cancel-grace-seconds", bad}).ok()) << bad;
  auto refused = Load({"--run-cancel-grace-seconds", "301"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "runCancelGraceSeconds must be between 1 and 300");
  EXPECT_FALSE(Load({"--config", WriteConfig(R"({"runCancelGraceSeconds": 0})")}).ok());
}

TEST_F(ConfigTest, TheEventRetentionHasADefaultAFlagAKeyAndARange) {
  EXPECT_EQ(MustLoad({}).event_retention_seconds, 7 * 86400);
  EXPECT_EQ(MustLoad({"--event-retention-seconds", "1"}).event_retention_seconds, 1);
  EXPECT_EQ(MustLoad({"--config", WriteConfig(R"({"eventRetentionSeconds": 315360000})")})
                .event_retention_seconds,
            315360000);
  for (const char* bad : {"0", "-1", "315360001", "x"})
    EXPECT_FALSE(Load({"--event-retention-seconds", bad}).ok()) << bad;
  auto refused = Load({"--event-retention-seconds", "0"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "eventRetentionSeconds must be between 1 and 315360000 (10 years)");
  EXPECT_FALSE(Load({"--config", WriteConfig(R"({"eventRetentionSeconds": 0})")}).ok());
}

TEST_F(ConfigTest, TheDatabaseAdminUrlComesFromAFlagTheEnvOrAKeyAndABadOneStopsTheStart) {
  EXPECT_EQ(MustLoad({}).database_admin_url, "");
  const std::string url = "postgres://admin:pw@127.0.0.1:5999/postgres";
  EXPECT_EQ(MustLoad({"--database-admin-url", url}).database_admin_url, url);
  EXPECT_EQ(MustLoad({"--config", WriteConfig(R"({"databaseAdminUrl": ")" + url + R"("})")})
                .database_admin_url,
            url);
  ::setenv("ADAPT_DATABASE_ADMIN_URL", url.c_str(), 1);
  EXPECT_EQ(MustLoad({}).database_admin_url, url);
  ::unsetenv("ADAPT_DATABASE_ADMIN_URL");
  auto bad = Load({"--database-admin-url", "postgres://admin:Hunter2Secret@db:99999/postgres"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "databaseAdminUrl");
  EXPECT_NE(bad.status().message().find("port"), std::string::npos) << bad.status().message();
  EXPECT_EQ(bad.status().message().find("Hunter2Secret"), std::string::npos);
}

TEST_F(ConfigTest, ConnectionLimitsHaveDefaultsFlagsAndFileKeys) {
  DaemonConfig d = MustLoad({});
  EXPECT_EQ(d.max_connections, 4096);
  EXPECT_EQ(d.max_connections_per_client, 256);
  EXPECT_EQ(d.max_streams_per_org, 256);
  EXPECT_EQ(d.header_timeout_seconds, 10);
  EXPECT_EQ(d.idle_timeout_seconds, 60);
  EXPECT_EQ(d.proxy_idle_timeout_seconds, 900);
  EXPECT_EQ(d.min_upload_bytes_per_second, 1024u);
  EXPECT_EQ(d.upload_grace_seconds, 10);
  DaemonConfig f =
      MustLoad({"--max-connections", "6", "--max-connections-per-client", "3", "--header-timeout",
                "2", "--idle-timeout", "4", "--proxy-idle-timeout", "30", "--min-upload-rate", "0",
                "--upload-grace", "5", "--max-streams-per-org", "0"});
  EXPECT_EQ(f.max_connections, 6);
  EXPECT_EQ(f.max_connections_per_client, 3);
  EXPECT_EQ(f.header_timeout_seconds, 2);
  EXPECT_EQ(f.idle_timeout_seconds, 4);
  EXPECT_EQ(f.proxy_idle_timeout_seconds, 30);
  EXPECT_EQ(f.min_upload_bytes_per_second, 0u);
  EXPECT_EQ(f.upload_grace_seconds, 5);
  EXPECT_EQ(f.max_streams_per_org, 0);
  std::string path = WriteConfig(
      R"({"maxConnectionsPerClient": 1000, "headerTimeoutSeconds": 20, "maxStreamsPerOrg": 9})");
  DaemonConfig j = MustLoad({"--config", path});
  EXPECT_EQ(j.max_connections_per_client, 1000);
  EXPECT_EQ(j.max_streams_per_org, 9);
  EXPECT_EQ(j.header_timeout_seconds, 20);
  auto bad = Load({"--header-timeout", "0"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "headerTimeoutSeconds");
  EXPECT_FALSE(Load({"--max-connections", "-1"}).ok());
  auto streams = Load({"--max-streams-per-org", "-1"});
  ASSERT_FALSE(streams.ok());
  EXPECT_EQ(streams.status().field(), "maxStreamsPerOrg");
}

}  // namespace
}  // namespace adapt::daemon
