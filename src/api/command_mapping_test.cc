#include "api/command_mapping.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

using nlohmann::json;

TEST(ParseRunPython, FillsTheDefaults) {
  auto req = ParseRunPython({{"code", "print(1)"}});
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->code, "print(1)");
  EXPECT_EQ(req->timeout_seconds, 600);
  EXPECT_EQ(req->wait_seconds, 10);
}

TEST(ParseRunPython, ErrorsNameTheRestFields) {
  struct Case {
    json body;
    std::string field;
  } cases[] = {
      {json::array(), ""},
      {json::object(), "code"},
      {{{"code", 3}}, "code"},
      {{{"code", "x"}, {"timeoutSeconds", 0}}, "timeoutSeconds"},
      {{{"code", "x"}, {"timeoutSeconds", "5"}}, "timeoutSeconds"},
      {{{"code", "x"}, {"waitSeconds", 61}}, "waitSeconds"},
      {{{"code", "x"}, {"stdin", "y"}}, "stdin"},
  };
  for (const auto& c : cases) {
    auto req = ParseRunPython(c.body);
    ASSERT_FALSE(req.ok()) << c.body.dump();
    EXPECT_EQ(req.status().code(), Code::kInvalidArgument) << c.body.dump();
    EXPECT_EQ(req.status().field(), c.field) << c.body.dump();
  }
}

Status Fails(const json& body) { return ParseRunCommand(body).status(); }

TEST(ParseRunCommand, ArgvIsTakenLiterallyWithDefaults) {
  auto r = ParseRunCommand({{"argv", {"echo", "a b"}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->argv, (std::vector<std::string>{"echo", "a b"}));
  EXPECT_EQ(r->timeout_seconds, 600);
  EXPECT_EQ(r->wait_seconds, 10);
  EXPECT_TRUE(r->cwd.empty());
}

TEST(ParseRunCommand, CommandRunsThroughTheShell) {
  auto r = ParseRunCommand({{"command", "echo hi | wc -c"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->argv, (std::vector<std::string>{"/bin/sh", "-c", "echo hi | wc -c"}));
}

TEST(ParseRunCommand, NeedsExactlyOneOfArgvAndCommand) {
  EXPECT_EQ(Fails(json::object()).code(), Code::kInvalidArgument);
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"command", "true"}}).code(), Code::kInvalidArgument);
  EXPECT_EQ(Fails({{"argv", json::array()}}).field(), "argv");
  EXPECT_EQ(Fails({{"argv", {1}}}).field(), "argv");
  EXPECT_EQ(Fails({{"command", ""}}).field(), "command");
}

TEST(ParseRunCommand, RejectsUnknownFields) {
  Status st = Fails({{"argv", {"true"}}, {"timeout", 5}});
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.field(), "timeout");
}

TEST(ParseRunCommand, ChecksRanges) {
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"timeoutSeconds", 0}}).field(), "timeoutSeconds");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"timeoutSeconds", 86401}}).field(), "timeoutSeconds");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"timeoutSeconds", "5"}}).field(), "timeoutSeconds");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"waitSeconds", 61}}).field(), "waitSeconds");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"waitSeconds", -1}}).field(), "waitSeconds");
  auto r = ParseRunCommand({{"argv", {"true"}}, {"waitSeconds", 0}, {"timeoutSeconds", 86400}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->wait_seconds, 0);
  EXPECT_EQ(r->timeout_seconds, 86400);
}

TEST(ParseRunCommand, ChecksCwdEnvStdinAndUser) {
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"cwd", "tmp"}}).field(), "cwd");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"env", {{"1A", "x"}}}}).field(), "env");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"env", {{"A", 1}}}}).field(), "env");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"env", json::array()}}).field(), "env");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"stdin", 3}}).field(), "stdin");
  EXPECT_EQ(Fails({{"argv", {"true"}}, {"user", 0}}).field(), "user");
  auto r = ParseRunCommand({{"argv", {"cat"}},
                            {"cwd", "/tmp"},
                            {"env", {{"A_1", "x"}}},
                            {"stdin", "in"},
                            {"user", "1000:1000"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->cwd, "/tmp");
  EXPECT_EQ(r->env.at("A_1"), "x");
  EXPECT_EQ(r->stdin_data, "in");
  EXPECT_EQ(r->user, "1000:1000");
}

TEST(CommandToJson, ARunningCommandHasEveryWireFieldWithNullsForWhatIsNotKnownYet) {
  core::Command c;
  c.id = "cmd_1";
  c.sandbox_id = "sbx_1";
  c.status = "running";
  c.argv = {"sleep", "9"};
  c.timeout_seconds = 30;
  c.stdout_text = "so far";
  c.started_at = 1795980600123;
  c.served_by = "agent";
  EXPECT_EQ(CommandToJson(c), json::parse(R"({"id":"cmd_1","sandboxId":"sbx_1","status":"running",
    "argv":["sleep","9"],"cwd":null,"user":null,"timeoutSeconds":30,"exitCode":null,
    "signal":null,"stdout":"so far","stderr":"","truncated":false,
    "startedAt":"2026-11-29T19:30:00.123Z","finishedAt":null,"terminationReason":null,
    "error":null,"servedBy":"agent"})"));
}

TEST(CommandToJson, AnEndedCommandShowsHowItEnded) {
  core::Command c;
  c.id = "cmd_1";
  c.status = "killed";
  c.cwd = "/w";
  c.user = "1000";
  c.signal = 9;
  c.truncated = true;
  c.finished_at = 1795980601000;
  c.termination_reason = "killed";
  json j = CommandToJson(c);
  EXPECT_EQ(j["cwd"], "/w");
  EXPECT_EQ(j["user"], "1000");
  EXPECT_TRUE(j["exitCode"].is_null());
  EXPECT_EQ(j["signal"], 9);
  EXPECT_EQ(j["truncated"], true);
  EXPECT_EQ(j["finishedAt"], "2026-11-29T19:30:01.000Z");
  EXPECT_EQ(j["terminationReason"], "killed");
  c.exit_code = 0;
  c.signal.reset();
  c.error = "lost";
  j = CommandToJson(c);
  EXPECT_EQ(j["exitCode"], 0);
  EXPECT_EQ(j["error"], "lost");
}

TEST(CommandPageToJson, ItemsAndTheNextCursor) {
  core::CommandPage page;
  page.items.resize(2);
  page.items[0].id = "cmd_2";
  EXPECT_EQ(CommandPageToJson(page)["items"][0]["id"], "cmd_2");
  EXPECT_TRUE(CommandPageToJson(page)["nextCursor"].is_null());
  page.next_cursor = "c1";
  EXPECT_EQ(CommandPageToJson(page)["nextCursor"], "c1");
}

}  // namespace
}  // namespace adapt::api
