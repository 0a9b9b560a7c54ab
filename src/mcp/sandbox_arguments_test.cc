// create_sandbox's mapper: MCP's arguments and units in, the core's errors named as MCP names
// its arguments, and the summary in MCP's words.
#include "mcp/sandbox_arguments.h"

#include <gtest/gtest.h>

#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

TEST(CreateSandboxFromArguments, ConvertsGibToMibAndNameToALabel) {
  core::CreateSandbox req = CreateSandboxFromArguments(
      {{"memory_gib", 0.5}, {"name", "w"}, {"startup_class", "durable"}, {"ttl_seconds", 60}});
  EXPECT_EQ(req.memory_mib, 512);
  EXPECT_EQ(req.labels, (std::map<std::string, std::string>{{"name", "w"}}));
  EXPECT_EQ(req.startup_class, "durable");
  EXPECT_EQ(req.ttl_seconds, 60);
  EXPECT_FALSE(req.cpu.has_value());
}

TEST(CreateSandboxFromArguments, CoreErrorsNameTheToolsArguments) {
  auto long_name =
      core::ValidateCreateSandbox(CreateSandboxFromArguments({{"name", std::string(300, 'n')}}),
                                  "debian:12", McpSandboxFields());
  ASSERT_FALSE(long_name.ok());
  EXPECT_EQ(long_name.status().field(), "name");
  auto instant = core::ValidateCreateSandbox(
      CreateSandboxFromArguments({{"startup_class", "instant"}, {"storage", "data"}}), "debian:12",
      McpSandboxFields());
  ASSERT_FALSE(instant.ok());
  std::string sentence = FailureSentence(instant.status());
  EXPECT_NE(sentence.find("use startup_class durable"), std::string::npos) << sentence;
  EXPECT_EQ(sentence.find("startupClass"), std::string::npos) << sentence;
  EXPECT_EQ(sentence.back(), '.');
}

TEST(SandboxSummary, SpeaksInGibAndSnakeCase) {
  core::Sandbox s;
  s.id = "sbx_abcdefghijklmnopqrst";
  s.status = "provisioning";
  s.config.memory_mib = 512;
  s.config.image = "debian:12";
  s.config.labels["name"] = "w";
  json j = SandboxSummary(s);
  EXPECT_EQ(j["sandbox_id"], s.id);
  EXPECT_EQ(j["memory_gib"], 0.5);
  EXPECT_EQ(j["name"], "w");
  EXPECT_EQ(j["ready"], false);
  EXPECT_TRUE(j["expires_at"].is_null());
  EXPECT_NE(j["next_action"].get<std::string>().find("wait_for_sandbox"), std::string::npos);
}

}  // namespace
}  // namespace adapt::mcp
