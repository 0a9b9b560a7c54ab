// The command row's JSON column: rows written before the record was typed (the REST wire
// object of the command) read back as the same command, and a typed record survives the trip
// but for its output, which the store keeps in columns of its own.
#include "store/command_record_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/time.h"

namespace adapt::store {
namespace {

// A data column as adaptd wrote it when the record held the command's REST JSON.
constexpr const char* kLegacyKilled = R"({"argv":["/bin/sh","-c","sleep 60"],"cwd":"/work",
  "error":null,"exitCode":null,"finishedAt":"2026-11-29T19:30:05.250Z","id":"cmd_a",
  "sandboxId":"sbx_a","servedBy":"agent","signal":9,"startedAt":"2026-11-29T19:30:00.123Z",
  "status":"killed","stderr":"","stdout":"partial\n","terminationReason":"killed",
  "timeoutSeconds":120,"truncated":true,"user":null})";

TEST(CommandRecordCodec, ReadsARowWrittenBeforeTheRecordWasTyped) {
  CommandRecord c;
  DecodeCommandData(kLegacyKilled, c);
  EXPECT_EQ(c.argv, (std::vector<std::string>{"/bin/sh", "-c", "sleep 60"}));
  EXPECT_EQ(c.cwd, "/work");
  EXPECT_EQ(c.user, "");
  EXPECT_EQ(c.timeout_seconds, 120);
  EXPECT_FALSE(c.exit_code.has_value());
  EXPECT_EQ(c.signal, 9);
  EXPECT_EQ(c.stdout_text, "partial\n");
  EXPECT_EQ(c.stderr_text, "");
  EXPECT_TRUE(c.truncated);
  ASSERT_TRUE(c.finished_at.has_value());
  EXPECT_EQ(FormatRfc3339(*c.finished_at), "2026-11-29T19:30:05.250Z");
  EXPECT_EQ(c.termination_reason, "killed");
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.served_by, "agent");
}

TEST(CommandRecordCodec, WritesTheKeysRowsHaveAlwaysHadButTheOutput) {
  CommandRecord c;
  c.id = "cmd_a";
  c.sandbox_id = "sbx_a";
  c.status = "killed";
  c.created_at = 1795980600123;  // 2026-11-29T19:30:00.123Z
  DecodeCommandData(kLegacyKilled, c);
  // The output has columns of its own (migration 38).
  nlohmann::json legacy = nlohmann::json::parse(kLegacyKilled);
  legacy.erase("stdout");
  legacy.erase("stderr");
  EXPECT_EQ(nlohmann::json::parse(EncodeCommandData(c)), legacy);
}

TEST(CommandRecordCodec, ATypedRecordSurvivesTheTrip) {
  CommandRecord c;
  c.status = "exited";
  c.argv = {"echo", "hé"};
  c.user = "1000:1000";
  c.exit_code = 3;
  c.stdout_text = "hé\n";
  c.stderr_text = "warning";
  c.created_at = 1000;
  c.finished_at = 2500;
  c.termination_reason = "exited";
  c.error = "lost with the agent";
  c.served_by = "agent";
  CommandRecord back;
  DecodeCommandData(EncodeCommandData(c), back);
  EXPECT_EQ(back.argv, c.argv);
  EXPECT_EQ(back.cwd, "");
  EXPECT_EQ(back.user, c.user);
  EXPECT_EQ(back.timeout_seconds, 600);
  EXPECT_EQ(back.exit_code, 3);
  EXPECT_FALSE(back.signal.has_value());
  EXPECT_EQ(back.stdout_text, "");  // not in the JSON: the store writes it to its own columns
  EXPECT_EQ(back.stderr_text, "");
  EXPECT_FALSE(back.truncated);
  EXPECT_EQ(back.finished_at, 2500);
  EXPECT_EQ(back.termination_reason, "exited");
  EXPECT_EQ(back.error, c.error);
  EXPECT_EQ(back.served_by, "agent");
}

TEST(CommandRecordCodec, ADamagedColumnLeavesTheDefaults) {
  CommandRecord c;
  DecodeCommandData("{not json", c);
  EXPECT_TRUE(c.argv.empty());
  EXPECT_EQ(c.served_by, "runsc-exec");
  DecodeCommandData(R"({"argv":"x","exitCode":"1","truncated":"yes","finishedAt":"soon"})", c);
  EXPECT_TRUE(c.argv.empty());
  EXPECT_FALSE(c.exit_code.has_value());
  EXPECT_FALSE(c.truncated);
  EXPECT_FALSE(c.finished_at.has_value());
}

}  // namespace
}  // namespace adapt::store
