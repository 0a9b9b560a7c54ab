// The sandbox row's config and result columns: rows written before the records were typed
// (the create body with defaults, REST's keys) read back as the same settings.
#include "store/sandbox_config_codec.h"

#include <gtest/gtest.h>

namespace adapt::store {
namespace {

// A config column as adaptd wrote it when the record held the REST JSON.
constexpr const char* kLegacyConfig = R"({"cpu":2,"diskMiB":4096,"image":"debian:12",
  "imageId":null,"labels":{"name":"w"},"memoryMiB":512,
  "network":{"allow":[{"address":"1.1.1.1","port":443,"protocol":"tcp"}],"dns":null,
             "egress":"allowlist","hostnames":[{"hostname":"api.example.com","port":443}]},
  "pool":{"reason":"the warm pool was empty","used":false},
  "secrets":[{"name":"TOKEN","version":2}],"securityProfile":"restricted",
  "startup":{"args":null,"argv":["sh","-c","true"],"cwd":null,"entrypoint":null,
             "mode":"command","user":"1000"},
  "startupClass":"durable","storage":"default","ttlSeconds":null})";

TEST(SandboxConfigCodec, ReadsARowWrittenBeforeTheRecordsWereTyped) {
  SandboxConfig c = DecodeSandboxConfig(kLegacyConfig);
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.memory_mib, 512);
  EXPECT_EQ(c.disk_mib, 4096);
  EXPECT_FALSE(c.ttl_seconds.has_value());
  EXPECT_EQ(c.labels, (std::map<std::string, std::string>{{"name", "w"}}));
  EXPECT_FALSE(c.image_id.has_value());
  EXPECT_EQ(c.network.egress, "allowlist");
  ASSERT_EQ(c.network.allow.size(), 1u);
  EXPECT_EQ(c.network.allow[0].port, 443);
  EXPECT_FALSE(c.network.dns.has_value());
  ASSERT_EQ(c.network.hostnames.size(), 1u);
  ASSERT_TRUE(c.startup.has_value());
  EXPECT_EQ(c.startup->mode, "command");
  EXPECT_EQ(c.startup->argv, (std::vector<std::string>{"sh", "-c", "true"}));
  EXPECT_FALSE(c.startup->args.has_value());
  EXPECT_EQ(c.startup->user, "1000");
  EXPECT_EQ(c.startup_class, "durable");
  EXPECT_EQ(c.storage, "default");
  ASSERT_EQ(c.secrets.size(), 1u);
  EXPECT_EQ(c.secrets[0].version, 2);
  ASSERT_TRUE(c.pool.has_value());
  EXPECT_EQ(c.pool->reason, "the warm pool was empty");
  EXPECT_EQ(DecodeSandboxConfig(EncodeSandboxConfig(c)), c);
}

TEST(SandboxConfigCodec, TheIdleTimeoutRoundTripsAndOlderRowsHaveNone) {
  EXPECT_FALSE(DecodeSandboxConfig(kLegacyConfig).idle_timeout_seconds.has_value());
  SandboxConfig c;
  c.idle_timeout_seconds = 900;
  SandboxConfig back = DecodeSandboxConfig(EncodeSandboxConfig(c));
  EXPECT_EQ(back.idle_timeout_seconds, 900);
  EXPECT_EQ(back, c);
}

TEST(SandboxConfigCodec, OpenEgressWithDnsDisabledRoundTripsAndOlderRowsHaveItEnabled) {
  EXPECT_FALSE(DecodeSandboxConfig(kLegacyConfig).network.dns_disabled);
  SandboxConfig c;
  c.network.dns_disabled = true;
  SandboxConfig back = DecodeSandboxConfig(EncodeSandboxConfig(c));
  EXPECT_TRUE(back.network.dns_disabled);
  EXPECT_FALSE(back.network.dns.has_value());
  EXPECT_EQ(back, c);
}

TEST(SandboxConfigCodec, AForksSourceRoundTripsAndOlderRowsHaveNone) {
  EXPECT_FALSE(DecodeSandboxConfig(kLegacyConfig).forked_from.has_value());
  SandboxConfig c;
  c.forked_from = ForkSourceConfig{"sbx_0123456789abcdef", "before-upgrade"};
  SandboxConfig back = DecodeSandboxConfig(EncodeSandboxConfig(c));
  ASSERT_TRUE(back.forked_from.has_value());
  EXPECT_EQ(back.forked_from->checkpoint, "before-upgrade");
  EXPECT_EQ(back, c);
}

TEST(SandboxConfigCodec, AnInteractiveSandboxHasNoStartup) {
  SandboxConfig c = DecodeSandboxConfig(R"({"startup":null,"cpu":1})");
  EXPECT_FALSE(c.startup.has_value());
  EXPECT_EQ(c.network.egress, "open");
}

TEST(SandboxConfigCodec, ResultKeepsTheOutcomeAndHibernation) {
  SandboxResult r = DecodeSandboxResult(R"({"exitCode":null,"signal":"SIGKILL",
    "finishedAt":"2026-01-01T00:00:01Z","stdout":"out","truncated":true,
    "hibernation":{"phase":"stopped","workspaceKept":true,"processesSaved":false,
                   "stoppedAt":5,"note":"n","restart":false}})");
  EXPECT_FALSE(r.exit_code.has_value());
  EXPECT_EQ(r.signal, "SIGKILL");
  EXPECT_EQ(r.stdout_text, "out");
  EXPECT_TRUE(r.truncated);
  ASSERT_TRUE(r.hibernation.has_value());
  EXPECT_EQ(r.hibernation->phase, "stopped");
  EXPECT_EQ(r.hibernation->stopped_at, 5);
  EXPECT_EQ(DecodeSandboxResult(EncodeSandboxResult(r)), r);
  EXPECT_EQ(DecodeSandboxResult("{}"), SandboxResult{});
}

}  // namespace
}  // namespace adapt::store
