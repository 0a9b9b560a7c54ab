#include "cli/sandbox_request.h"

#include <gtest/gtest.h>

namespace adapt::cli {
namespace {

using nlohmann::json;

json MustBuild(const SandboxCreateFlags& flags, const json& data = nullptr) {
  Result<json> body = BuildCreateBody(flags, data);
  EXPECT_TRUE(body.ok()) << body.status().message();
  return body.ok() ? *body : json();
}

TEST(BuildCreateBody, NoFlagsIsAnEmptyObjectSoServerDefaultsApply) {
  EXPECT_EQ(MustBuild({}), json::object());
}

TEST(BuildCreateBody, SeedExampleFlagsBecomeWireFields) {
  SandboxCreateFlags flags;
  flags.cpu = "2";
  flags.memory_mib = "4096";
  flags.disk_mib = "8192";
  flags.ttl = "3600";
  flags.labels = {"name=research-worker", "project=research"};
  EXPECT_EQ(MustBuild(flags), json::parse(R"({"cpu":2,"memoryMiB":4096,"diskMiB":8192,
      "ttlSeconds":3600,"labels":{"name":"research-worker","project":"research"}})"));
}

TEST(BuildCreateBody, GpuIsTheGpuObjectWithItsType) {
  SandboxCreateFlags flags;
  flags.gpu = "l4";
  EXPECT_EQ(MustBuild(flags), json::parse(R"({"gpu":{"type":"l4"}})"));
}

TEST(BuildCreateBody, RepeatedLabelKeepsTheLastValue) {
  SandboxCreateFlags flags;
  flags.labels = {"name=a", "name=b"};
  EXPECT_EQ(MustBuild(flags)["labels"], json({{"name", "b"}}));
}

TEST(BuildCreateBody, TtlNoneIsNull) {
  SandboxCreateFlags flags;
  flags.ttl = "none";
  json body = MustBuild(flags);
  ASSERT_TRUE(body.contains("ttlSeconds"));
  EXPECT_TRUE(body["ttlSeconds"].is_null());
}

TEST(BuildCreateBody, OutOfRangeNumbersPassThroughForTheServerToJudge) {
  SandboxCreateFlags flags;
  flags.cpu = "0";
  flags.ttl = "-5";
  json body = MustBuild(flags);
  EXPECT_EQ(body["cpu"], 0);
  EXPECT_EQ(body["ttlSeconds"], -5);
}

TEST(BuildCreateBody, IdleTimeoutIsIdleTimeoutSeconds) {
  SandboxCreateFlags flags;
  flags.idle_timeout = "900";
  json body = MustBuild(flags);
  EXPECT_EQ(body["idleTimeoutSeconds"], 900);
  EXPECT_FALSE(MustBuild(SandboxCreateFlags{}).contains("idleTimeoutSeconds"));
}

TEST(BuildCreateBody, NonIntegerIsAUsageErrorNamingTheFlag) {
  SandboxCreateFlags flags;
  flags.memory_mib = "4G";
  Result<json> body = BuildCreateBody(flags);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(body.status().message(), "--memory: expected an integer, got '4G'");
}

TEST(BuildCreateBody, ImageEnvEgressAndRunImage) {
  SandboxCreateFlags flags;
  flags.image = "nginx:alpine";
  flags.run_image = true;
  flags.env = {"A=1", "B=x=y"};
  flags.egress = "none";
  EXPECT_EQ(MustBuild(flags), json::parse(R"({"image":"nginx:alpine","startup":{"mode":"image"},
      "env":{"A":"1","B":"x=y"},"network":{"egress":"none"}})"));
}

TEST(BuildCreateBody, ArgvAfterDoubleDashIsACommandStartup) {
  SandboxCreateFlags flags;
  flags.command = std::vector<std::string>{"python", "-c", "print('hello')"};
  EXPECT_EQ(MustBuild(flags)["startup"],
            json::parse(R"J({"mode":"command","argv":["python","-c","print('hello')"]})J"));
}

TEST(BuildCreateBody, RunImageWithACommandIsAUsageError) {
  SandboxCreateFlags flags;
  flags.run_image = true;
  flags.command = std::vector<std::string>{"true"};
  EXPECT_FALSE(BuildCreateBody(flags).ok());
}

TEST(BuildCreateBody, FlagsOverrideDataFieldsAndKeepTheRest) {
  json data = json::parse(R"({"cpu":4,"imageId":"img_1","labels":{"name":"x","team":"a"},
      "network":{"egress":"allowlist","allow":[{"protocol":"tcp","address":"1.1.1.1","port":443}]},
      "startup":{"mode":"command","argv":["sh"],"cwd":"/work"}})");
  SandboxCreateFlags flags;
  flags.cpu = "2";
  flags.image = "python:3.12-slim";
  flags.labels = {"name=y"};
  flags.egress = "open";
  flags.command = std::vector<std::string>{"python", "app.py"};
  json body = MustBuild(flags, data);
  EXPECT_EQ(body["cpu"], 2);
  EXPECT_EQ(body["image"], "python:3.12-slim");
  EXPECT_FALSE(body.contains("imageId"));
  EXPECT_EQ(body["labels"], json({{"name", "y"}, {"team", "a"}}));
  EXPECT_EQ(body["network"]["egress"], "open");
  EXPECT_EQ(body["network"]["allow"].size(), 1u);
  EXPECT_EQ(body["startup"], json::parse(R"({"mode":"command","argv":["python","app.py"],
      "cwd":"/work"})"));
}

TEST(BuildCreateBody, DataAloneIsSentUnchanged) {
  json data = json::parse(R"({"network":{"egress":"allowlist","allow":[]},"gpu":{"type":"x"}})");
  EXPECT_EQ(MustBuild({}, data), data);
}

TEST(ParseKeyValue, SplitsAtTheFirstEquals) {
  Result<std::pair<std::string, std::string>> pair = ParseKeyValue("--env", "URL=a=b");
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(pair->first, "URL");
  EXPECT_EQ(pair->second, "a=b");
}

TEST(ParseKeyValue, EmptyValueIsAllowed) {
  Result<std::pair<std::string, std::string>> pair = ParseKeyValue("--label", "k=");
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(pair->second, "");
}

TEST(ParseKeyValue, MissingEqualsOrKeyIsAnErrorNamingTheFlag) {
  Result<std::pair<std::string, std::string>> no_equals = ParseKeyValue("--label", "name");
  ASSERT_FALSE(no_equals.ok());
  EXPECT_EQ(no_equals.status().message(), "--label: expected KEY=VALUE, got 'name'");
  EXPECT_FALSE(ParseKeyValue("--label", "=value").ok());
}

TEST(BuildCreateBody, BadLabelFailsTheBuild) {
  SandboxCreateFlags flags;
  flags.labels = {"ok=1", "broken"};
  EXPECT_FALSE(BuildCreateBody(flags).ok());
}

TEST(BuildCreateBody, StorageAndStartupClassSetTheirFields) {
  SandboxCreateFlags flags;
  flags.storage = "project";
  flags.startup_class = "durable";
  json body = MustBuild(flags, json::parse(R"({"storage":"other","cpu":2})"));
  EXPECT_EQ(body["storage"], "project");
  EXPECT_EQ(body["startupClass"], "durable");
  EXPECT_EQ(body["cpu"], 2);
}

TEST(BuildCreateBody, UnknownStartupClassIsAnErrorNamingTheFlag) {
  SandboxCreateFlags flags;
  flags.startup_class = "fast";
  Result<json> body = BuildCreateBody(flags);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().message(), "--startup-class: expected durable or instant, got 'fast'");
}

TEST(BuildCreateBody, SecurityProfileSetsItsFieldAndRefusesOthers) {
  SandboxCreateFlags flags;
  flags.security_profile = "developer";
  EXPECT_EQ(MustBuild(flags, nullptr)["securityProfile"], "developer");
  flags.security_profile = "root";
  Result<json> body = BuildCreateBody(flags);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().message(),
            "--security-profile: expected restricted or developer, got 'root'");
}

TEST(ParseDataDocument, RejectsInvalidJsonAndNonObjects) {
  EXPECT_TRUE(ParseDataDocument(R"({"cpu":1})", "stdin").ok());
  Result<json> invalid = ParseDataDocument("{cpu", "stdin");
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("--data: invalid JSON in stdin"), std::string::npos);
  EXPECT_FALSE(ParseDataDocument("[1]", "stdin").ok());
}

TEST(BuildCreateBody, FromCheckpointAsksForAFork) {
  SandboxCreateFlags flags;
  flags.from_checkpoint = "sbx_0123456789abcdef/before-upgrade";
  flags.ttl = "600";
  json body = MustBuild(flags);
  EXPECT_EQ(body["fromCheckpoint"], "sbx_0123456789abcdef/before-upgrade");
  EXPECT_EQ(body["ttlSeconds"], 600);
}

}  // namespace
}  // namespace adapt::cli
