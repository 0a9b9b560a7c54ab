// How a sandbox looks on the wire: core::ViewOf a stored record, mapped by SandboxToJson.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "api/sandbox_json.h"

namespace adapt::api {
namespace {

using core::ApplyOutput;
using core::RedactionValues;
using nlohmann::json;

const std::string kFffd = "\xEF\xBF\xBD";

Result<core::NewSandbox> Validate(const json& body) {
  ASSIGN_OR_RETURN(core::CreateSandbox create, CreateSandboxFromJson(body));
  return core::ValidateCreateSandbox(create, "debian:12", RestSandboxFields());
}

// A stored record as the service makes it: config from the validated create, env apart.
store::SandboxRecord Record(const json& body) {
  auto req = Validate(body);
  EXPECT_TRUE(req.ok()) << req.status().message();
  store::SandboxRecord r;
  r.seq = 1;
  r.id = "sbx_abcdefghijklmnopqrst";
  r.org_id = "org_x";
  r.status = "running";
  r.config = req.ok() ? req->config : core::SandboxConfig{};
  r.env = req.ok() ? req->env : std::map<std::string, std::string>{};
  r.created_at = 1700000000123;
  r.updated_at = 1700000001000;
  r.expires_at = r.created_at + 3600 * 1000;
  return r;
}

json Wire(const store::SandboxRecord& r, const runtime::OutputRing* live = nullptr) {
  return SandboxToJson(core::ViewOf(r, live));
}

const json kCommandBody = json::parse(R"({
  "labels": {"name": "worker"},
  "startup": {"argv": ["sh", "-c", "echo $API_TOKEN"]},
  "env": {"API_TOKEN": "tok-4f9a-secret", "DB_PASSWORD": "correct horse", "SHORT": "ab"}})");

TEST(SandboxToJson, NeverContainsEnvironmentValues) {
  store::SandboxRecord r = Record(kCommandBody);
  r.result.exit_code = 0;
  r.result.stdout_text = "done\n";
  std::string wire = Wire(r).dump();
  EXPECT_EQ(wire.find("tok-4f9a-secret"), std::string::npos) << wire;
  EXPECT_EQ(wire.find("correct horse"), std::string::npos) << wire;

  runtime::OutputRing live;
  live.Append(runtime::Stream::kStdout, "tok-4f9a-secret\n");
  live.Append(runtime::Stream::kStderr, "password: correct horse\n");
  wire = Wire(r, &live).dump();
  EXPECT_EQ(wire.find("tok-4f9a-secret"), std::string::npos) << wire;
  EXPECT_EQ(wire.find("correct horse"), std::string::npos) << wire;
}

TEST(SandboxToJson, AttachedSecretsShowTheirVersionNeverTheirValue) {
  store::SandboxRecord r = Record(kCommandBody);
  r.env["DB_PASSWORD"] = "from-the-secret-store";
  r.config.secrets = {{"DB_PASSWORD", 3}};
  json j = Wire(r);
  EXPECT_EQ(j["secrets"], json({"DB_PASSWORD"}));
  EXPECT_EQ(j["environmentSources"][1],
            json({{"name", "DB_PASSWORD"}, {"source", "secret"}, {"version", 3}}));
  EXPECT_EQ(j["environmentSources"][0]["source"], "env");
  runtime::OutputRing live;
  live.Append(runtime::Stream::kStdout, "pw=from-the-secret-store\n");
  std::string wire = Wire(r, &live).dump();
  EXPECT_EQ(wire.find("from-the-secret-store"), std::string::npos) << wire;
  EXPECT_EQ(Wire(Record(kCommandBody))["secrets"], json::array());
}

TEST(SandboxToJson, ListsEnvironmentNamesAndSources) {
  json j = Wire(Record(kCommandBody));
  EXPECT_EQ(j["environmentNames"], json({"API_TOKEN", "DB_PASSWORD", "SHORT"}));
  ASSERT_EQ(j["environmentSources"].size(), 3u);
  EXPECT_EQ(j["environmentSources"][0]["name"], "API_TOKEN");
  EXPECT_EQ(j["environmentSources"][0]["source"], "env");
  for (const auto& s : j["environmentSources"]) EXPECT_FALSE(s.contains("value"));
  EXPECT_FALSE(j.contains("env"));
}

TEST(SandboxToJson, NoEnvironmentIsEmptyLists) {
  json j = Wire(Record(json::object()));
  EXPECT_EQ(j["environmentNames"], json::array());
  EXPECT_EQ(j["environmentSources"], json::array());
}

TEST(SandboxToJson, StartupIsNullForAnInteractiveSandbox) {
  store::SandboxRecord r = Record(json::object());
  runtime::OutputRing live;
  live.Append(runtime::Stream::kStdout, "ignored");
  json j = Wire(r, &live);
  ASSERT_TRUE(j.contains("startup"));
  EXPECT_TRUE(j["startup"].is_null());
}

TEST(SandboxToJson, ShowsConfigurationWithDefaults) {
  json j = Wire(Record(kCommandBody));
  EXPECT_EQ(j["id"], "sbx_abcdefghijklmnopqrst");
  EXPECT_EQ(j["status"], "running");
  EXPECT_EQ(j["cpu"], 1);
  EXPECT_EQ(j["memoryMiB"], 1024);
  EXPECT_EQ(j["diskMiB"], 2048);
  EXPECT_EQ(j["ttlSeconds"], 3600);
  EXPECT_EQ(j["labels"], json({{"name", "worker"}}));
  EXPECT_EQ(j["image"], "debian:12");
  EXPECT_TRUE(j["imageId"].is_null());
  EXPECT_EQ(j["network"]["egress"], "open");
  EXPECT_EQ(j["createdAt"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(j["expiresAt"], "2023-11-14T23:13:20.123Z");
  EXPECT_TRUE(j["terminationReason"].is_null());
  EXPECT_TRUE(j["deletedAt"].is_null());
  EXPECT_EQ(j["endpoints"], json::array());
}

TEST(SandboxToJson, ExpiresAtIsNullWithoutTtl) {
  store::SandboxRecord r = Record(json::parse(R"({"ttlSeconds": null})"));
  r.expires_at = std::nullopt;
  json j = Wire(r);
  ASSERT_TRUE(j.contains("expiresAt"));
  EXPECT_TRUE(j["expiresAt"].is_null());
  EXPECT_TRUE(j["ttlSeconds"].is_null());
}

TEST(SandboxToJson, StartupCarriesTheStoredResult) {
  store::SandboxRecord r = Record(kCommandBody);
  r.status = "failed";
  r.termination_reason = "failed";
  r.result.exit_code = 3;
  r.result.started_at = "2023-11-14T22:13:21.000Z";
  r.result.finished_at = "2023-11-14T22:13:22.000Z";
  r.result.stdout_text = "out";
  r.result.stderr_text = "err";
  r.result.truncated = true;
  json s = Wire(r)["startup"];
  EXPECT_EQ(s["mode"], "command");
  EXPECT_EQ(s["argv"], json({"sh", "-c", "echo $API_TOKEN"}));
  EXPECT_EQ(s["exitCode"], 3);
  EXPECT_TRUE(s["signal"].is_null());
  EXPECT_TRUE(s["error"].is_null());
  EXPECT_EQ(s["startedAt"], "2023-11-14T22:13:21.000Z");
  EXPECT_EQ(s["finishedAt"], "2023-11-14T22:13:22.000Z");
  EXPECT_EQ(s["stdout"], "out");
  EXPECT_EQ(s["stderr"], "err");
  EXPECT_EQ(s["truncated"], true);
  EXPECT_EQ(Wire(r)["terminationReason"], "failed");
}

TEST(SandboxToJson, StartupBeforeAnyResultHasEmptyOutput) {
  json s = Wire(Record(kCommandBody))["startup"];
  EXPECT_TRUE(s["exitCode"].is_null());
  EXPECT_TRUE(s["startedAt"].is_null());
  EXPECT_EQ(s["stdout"], "");
  EXPECT_EQ(s["stderr"], "");
  EXPECT_EQ(s["truncated"], false);
}

TEST(SandboxToJson, LiveOutputIsRedactedAndNulReplaced) {
  store::SandboxRecord r = Record(kCommandBody);
  runtime::OutputRing live;
  live.Append(runtime::Stream::kStdout, std::string("token=tok-4f9a-secret\0end\n", 26));
  live.Append(runtime::Stream::kStderr, "db: correct horse; short: ab\n");
  live.Append(runtime::Stream::kStderr, "bad byte: \xff\n");
  json s = Wire(r, &live)["startup"];
  EXPECT_EQ(s["stdout"], "token=[REDACTED]" + kFffd + "end\n");
  // Values under 3 bytes are not redacted: they would blank out ordinary output.
  EXPECT_EQ(s["stderr"], "db: [REDACTED]; short: ab\nbad byte: " + kFffd + "\n");
  EXPECT_EQ(s["truncated"], false);
  // The dump must succeed: everything is valid UTF-8 now.
  EXPECT_NO_THROW(Wire(r, &live).dump());
}

TEST(SandboxToJson, LiveOutputReportsTruncation) {
  store::SandboxRecord r = Record(kCommandBody);
  runtime::OutputRing live;
  live.Append(runtime::Stream::kStdout, std::string(runtime::OutputRing::kMaxBytes + 10, 'y'));
  json s = Wire(r, &live)["startup"];
  EXPECT_EQ(s["truncated"], true);
  EXPECT_EQ(s["stdout"].get<std::string>().size(), runtime::OutputRing::kMaxBytes);
}

TEST(RedactionValues, AreEnvValuesOfThreeBytesOrMore) {
  auto values = RedactionValues(Record(kCommandBody));
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<std::string>{"correct horse", "tok-4f9a-secret"}));
}

TEST(ApplyOutput, WritesRedactedOutputIntoAResult) {
  store::SandboxRecord r = Record(kCommandBody);
  runtime::OutputRing out;
  out.Append(runtime::Stream::kStdout, "tok-4f9a-secret");
  store::SandboxResult result;
  result.exit_code = 0;
  ApplyOutput(r, out, false, result);
  EXPECT_EQ(result.stdout_text, "[REDACTED]");
  EXPECT_EQ(result.stderr_text, "");
  EXPECT_FALSE(result.truncated);
  EXPECT_EQ(result.exit_code, 0);
}

}  // namespace
}  // namespace adapt::api
