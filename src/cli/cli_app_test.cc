// Drives the whole command line against a canned adaptd and checks what went over the wire
// and what the user sees.
#include "cli/cli_app.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_run.h"
#include "cli/test_http_server.h"

namespace adapt::cli {
namespace {

using nlohmann::json;
using testing::CannedExchange;
using testing::CannedResponse;
using testing::OpenEventStream;
using testing::Outcome;
using testing::RecordedRequest;
using testing::RunCli;
using testing::TestHttpServer;

const char* kSandbox = R"({"id":"sbx_1","status":"provisioning","cpu":2,"memoryMiB":4096,
  "diskMiB":8192,"ttlSeconds":3600,"labels":{"name":"research-worker"},"image":"debian:12"})";

std::string RunningSandbox() {
  json sandbox = json::parse(kSandbox);
  sandbox["status"] = "running";
  return sandbox.dump();
}

// A running sandbox, then a command started on it that has exited 0, and its stream's result.
std::vector<CannedExchange> CommandThatExitsZero() {
  return {{CannedResponse(200, RunningSandbox())},
          {CannedResponse(200, R"({"id":"cmd_1","status":"exited","exitCode":0})")},
          {CannedResponse(200,
                          "event: result\ndata: {\"id\":\"cmd_1\",\"status\":\"exited\","
                          "\"exitCode\":0}\n\n",
                          "text/event-stream")}};
}

std::string StatusEvents(const std::vector<std::string>& statuses) {
  std::string events;
  int id = 0;
  for (const std::string& status : statuses)
    events += "id: " + std::to_string(++id) + "\nevent: status\ndata: " +
              json({{"sandboxId", "sbx_1"}, {"status", status}}).dump() + "\n\n";
  return events;
}

// POST answers provisioning; the CLI follows the sandbox's events, then reads it again.
std::vector<CannedExchange> CreateThatBoots(const std::string& final_record) {
  return {{CannedResponse(201, kSandbox)},
          {CannedResponse(200, StatusEvents({"provisioning", "running"}), "text/event-stream")},
          {CannedResponse(200, final_record)}};
}

TEST(AdaptCli, SeedCreateCommandSendsTheDocumentedBodyAndWaitsUntilItRuns) {
  TestHttpServer server(CreateThatBoots(RunningSandbox()));
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--cpu", "2", "--memory", "4096",
                                          "--disk", "8192", "--ttl", "3600", "--label",
                                          "name=research-worker", "--label", "project=research"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 3u);
  RecordedRequest request = requests[0];
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/v1/sandboxes");
  EXPECT_EQ(request.headers["authorization"], "Bearer adapt_test");
  EXPECT_EQ(json::parse(request.body), json::parse(R"({"cpu":2,"memoryMiB":4096,"diskMiB":8192,
      "ttlSeconds":3600,"labels":{"name":"research-worker","project":"research"}})"));
  EXPECT_EQ(requests[1].target, "/v1/sandboxes/sbx_1/events");
  EXPECT_EQ(requests[2].target, "/v1/sandboxes/sbx_1");
  EXPECT_NE(outcome.out.find("id:"), std::string::npos);
  EXPECT_NE(outcome.out.find("sbx_1"), std::string::npos);
  EXPECT_NE(outcome.out.find("running"), std::string::npos) << outcome.out;
  EXPECT_EQ(outcome.out.find("provisioning"), std::string::npos) << outcome.out;
}

TEST(AdaptCli, CreateNoWaitReturnsAtOnceWhileProvisioning) {
  TestHttpServer server(CannedResponse(201, kSandbox));
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--no-wait", "--json"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(json::parse(outcome.out)["status"], "provisioning");
  EXPECT_EQ(server.TakeRequests().size(), 1u);
}

TEST(AdaptCli, CreateQuietPrintsOnlyTheIdOfTheRunningSandbox) {
  TestHttpServer server(CreateThatBoots(RunningSandbox()));
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--quiet"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "sbx_1\n");
  EXPECT_EQ(server.TakeRequests().size(), 3u);
}

TEST(AdaptCli, CreateWaitBoundsTheWaitAndSaysSoWhenItRunsOut) {
  TestHttpServer server({{CannedResponse(201, kSandbox)},
                         {OpenEventStream(StatusEvents({"provisioning"})), true},
                         {CannedResponse(200, kSandbox)}});
  auto started = std::chrono::steady_clock::now();
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "-q", "--wait", "1"});
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.out, "sbx_1\n");  // the id still reaches a script, for its cleanup
  EXPECT_EQ(outcome.err,
            "adapt: sandbox sbx_1 is still provisioning after 1 s; `adapt sandbox get sbx_1` "
            "shows when it runs\n");
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(AdaptCli, CreateOfASandboxThatCouldNotStartExitsOneWithItsError) {
  json failed = json::parse(kSandbox);
  failed["status"] = "failed";
  failed["error"] = "pulling nope:1: not found";
  TestHttpServer server(CreateThatBoots(failed.dump()));
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--image", "nope:1"});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err, "adapt: sandbox sbx_1 failed: pulling nope:1: not found\n");
}

TEST(AdaptCli, CreateOfAStartupCommandThatExitedNonZeroSucceeds) {
  json ended = json::parse(kSandbox);
  ended["status"] = "failed";
  ended["startup"] = {{"mode", "command"}, {"argv", {"false"}}, {"exitCode", 1}};
  TestHttpServer server(CreateThatBoots(ended.dump()));
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--", "false"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("exitCode"), std::string::npos) << outcome.out;
}

// API.md: JSON with --json, a listing otherwise, also for records without a view of their own.
TEST(AdaptCli, RecordsOfCommandsAndRunsReadAsListingsUnlessJsonIsAsked) {
  const std::string command =
      R"({"id":"cmd_1","status":"exited","exitCode":3,"argv":["sh","-c","exit 3"],)"
      R"("stdout":"one\ntwo\n","stderr":"","signal":null,"truncated":false})";
  TestHttpServer server({{CannedResponse(200, command)},
                         {CannedResponse(200, command)},
                         {CannedResponse(200, R"({"id":"run_1","status":"succeeded"})")}});
  Outcome listing = RunCli(server.url(), {"command", "get", "sbx_1", "cmd_1"});
  EXPECT_EQ(listing.exit_code, 0) << listing.err;
  EXPECT_EQ(listing.out,
            "argv:       sh -c exit 3\nexitCode:   3\nid:         cmd_1\nstatus:     exited\n"
            "truncated:  false\nstdout:\n  one\n  two\n");
  Outcome as_json = RunCli(server.url(), {"--json", "command", "get", "sbx_1", "cmd_1"});
  EXPECT_EQ(json::parse(as_json.out), json::parse(command));
  Outcome run = RunCli(server.url(), {"run", "get", "run_1"});
  EXPECT_EQ(run.out, "id:      run_1\nstatus:  succeeded\n");
}

TEST(AdaptCli, CreateWaitAndNoWaitExcludeEachOther) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  EXPECT_EQ(RunCli(url, {"sandbox", "create", "--wait", "5", "--no-wait"}).exit_code, 2);
  EXPECT_EQ(RunCli(url, {"sandbox", "create", "--wait", "-1"}).exit_code, 2);
}

TEST(AdaptCli, ExecOnAProvisioningSandboxWaitsForItThenRuns) {
  const std::string command_events =
      "event: stdout\ndata: {\"data\":\"hi\\n\"}\n\n"
      "event: result\ndata: {\"id\":\"cmd_1\",\"status\":\"exited\",\"exitCode\":3}\n\n";
  TestHttpServer server(
      {{CannedResponse(200, kSandbox)},
       {CannedResponse(200, StatusEvents({"provisioning", "running"}), "text/event-stream")},
       {CannedResponse(200, RunningSandbox())},
       {CannedResponse(202, R"({"id":"cmd_1","status":"running"})")},
       {CannedResponse(200, command_events, "text/event-stream")}});
  Outcome outcome = RunCli(server.url(), {"sandbox", "exec", "sbx_1", "--", "echo", "hi"});
  EXPECT_EQ(outcome.exit_code, 3) << outcome.err;
  EXPECT_EQ(outcome.out, "hi\n");
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[1].target, "/v1/sandboxes/sbx_1/events");
  EXPECT_EQ(requests[3].method, "POST");
  EXPECT_EQ(requests[3].target, "/v1/sandboxes/sbx_1/commands");
  EXPECT_EQ(requests[4].target, "/v1/sandboxes/sbx_1/commands/cmd_1/stream");
}

TEST(AdaptCli, ExecPassesStandardInputAndTheUserWhenAsked) {
  const std::string command_events =
      "event: stdout\ndata: {\"data\":\"2\\n\"}\n\n"
      "event: result\ndata: {\"id\":\"cmd_1\",\"status\":\"exited\",\"exitCode\":0}\n\n";
  TestHttpServer server({{CannedResponse(200, RunningSandbox())},
                         {CannedResponse(202, R"({"id":"cmd_1","status":"running"})")},
                         {CannedResponse(200, command_events, "text/event-stream")}});
  Outcome outcome = RunCli(
      server.url(), {"sandbox", "exec", "sbx_1", "-i", "--user", "1000:1000", "--", "wc", "-l"},
      "caf\xc3\xa9\nline two\n");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "2\n");
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 3u);
  json body = json::parse(requests[1].body);
  EXPECT_EQ(body["stdin"], "caf\xc3\xa9\nline two\n");
  EXPECT_EQ(body["user"], "1000:1000");
  EXPECT_EQ(body["argv"], json({"wc", "-l"}));
}

TEST(AdaptCli, ExecWithoutStdinSendsNone) {
  TestHttpServer server(CommandThatExitsZero());
  Outcome outcome = RunCli(server.url(), {"sandbox", "exec", "sbx_1", "--", "true"}, "ignored\n");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_FALSE(json::parse(requests[1].body).contains("stdin"));
}

TEST(AdaptCli, ExecRefusesBinaryStdinBeforeAnyRequest) {
  // Nothing listens there: a request would fail with another message.
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Outcome outcome = RunCli(url, {"sandbox", "exec", "sbx_1", "--stdin", "--", "cat"},
                           std::string("\x7f"
                                       "ELF\xff\0",
                                       6));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.err,
            "adapt: --stdin passes text: standard input is not UTF-8 text without NUL bytes (copy "
            "binary files in with adapt sandbox cp)\n");
}

TEST(AdaptCli, ExecRefusesStdinOverTheLimitBeforeAnyRequest) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Outcome outcome =
      RunCli(url, {"sandbox", "exec", "sbx_1", "-i", "--", "cat"}, std::string((8 << 20) + 1, 'a'));
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.err, "adapt: --stdin passes at most 8 MiB of standard input\n");
  // Exactly the limit is sent (nothing listens: the request fails to connect).
  Outcome at_limit =
      RunCli(url, {"sandbox", "exec", "sbx_1", "-i", "--", "cat"}, std::string(8 << 20, 'a'));
  EXPECT_NE(at_limit.err.find("cannot reach adaptd"), std::string::npos) << at_limit.err;
}

TEST(AdaptCli, PythonRefusesAProgramOverTheLimitOrNotTextBeforeAnyRequest) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Outcome large = RunCli(url, {"sandbox", "python", "sbx_1"}, std::string((8 << 20) + 1, '#'));
  EXPECT_EQ(large.exit_code, 2);
  EXPECT_EQ(large.err, "adapt: the Python program is larger than 8 MiB\n");
  Outcome binary =
      RunCli(url, {"sandbox", "python", "sbx_1", "--file", "-"}, std::string("print(1)\0", 9));
  EXPECT_EQ(binary.exit_code, 2);
  EXPECT_EQ(binary.err, "adapt: the Python program is not UTF-8 text without NUL bytes\n");
  Outcome empty = RunCli(url, {"sandbox", "python", "sbx_1"}, "");
  EXPECT_EQ(empty.err, "adapt: the Python program is empty\n");
  // Exactly the limit is sent (nothing listens: the request fails to connect).
  Outcome at_limit = RunCli(url, {"sandbox", "python", "sbx_1"}, std::string(8 << 20, '#'));
  EXPECT_NE(at_limit.err.find("cannot reach adaptd"), std::string::npos) << at_limit.err;
}

TEST(AdaptCli, PythonSendsTheProgramReadFromAFile) {
  TestHttpServer server(CommandThatExitsZero());
  const std::string path = ::testing::TempDir() + "adapt-cli-program.py";
  std::ofstream(path) << "print(1 + 1)\n";
  Outcome outcome = RunCli(server.url(), {"sandbox", "python", "sbx_1", "--file", path}, "ignored");
  std::remove(path.c_str());
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].target, "/v1/sandboxes/sbx_1/python");
  EXPECT_EQ(json::parse(requests[1].body)["code"], "print(1 + 1)\n");
}

TEST(AdaptCli, LogsPrintsTheStartupOutputAsItComesAndExitsWithItsCode) {
  const std::string events =
      "event: stdout\ndata: {\"data\":\"first\\n\"}\n\n"
      ": keepalive\n\n"
      "event: stdout\ndata: {\"data\":\"second\\n\"}\n\n"
      "event: result\ndata: {\"id\":\"sbx_1\",\"status\":\"completed\","
      "\"startup\":{\"exitCode\":4}}\n\n";
  TestHttpServer server(CannedResponse(200, events, "text/event-stream"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "logs", "sbx_1"});
  EXPECT_EQ(outcome.exit_code, 4) << outcome.err;
  EXPECT_EQ(outcome.out, "first\nsecond\n");
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/v1/sandboxes/sbx_1/startup/stream");
}

TEST(AdaptCli, LogsOfAnInteractiveSandboxSaysWhyInOneLine) {
  TestHttpServer server(CannedResponse(
      409, R"({"error":{"code":"conflict","message":"sandbox sbx_1 has no startup command"}})"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "logs", "sbx_1"});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err, "adapt: sandbox sbx_1 has no startup command\n");
}

TEST(AdaptCli, LsOfAnUnknownSandboxSaysSoInOneLine) {
  TestHttpServer server(
      CannedResponse(404, R"({"error":{"code":"not_found","message":"sandbox sbx_9 not found"}})"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "ls", "sbx_9", "/"});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err, "adapt: sandbox sbx_9 not found\n");
  EXPECT_EQ(server.TakeRequests().size(), 1u);
}

TEST(AdaptCli, CreateReadsDataFromStdin) {
  TestHttpServer server(CannedResponse(201, kSandbox));
  const std::string data =
      R"J({"image":"python:3.12-slim",
          "startup":{"mode":"command","argv":["python","-c","print('hello')"]}})J";
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--no-wait", "--data", "-"}, data);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(json::parse(server.TakeRequest().body), json::parse(data));
}

TEST(AdaptCli, CreateWithArgvIdempotencyKeyAndJsonOutput) {
  TestHttpServer server(CannedResponse(201, kSandbox));
  Outcome outcome =
      RunCli(server.url(), {"sandbox", "create", "--no-wait", "--image", "nginx:alpine", "--json",
                            "--idempotency-key", "k-1", "--", "nginx", "-g", "daemon off;"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  RecordedRequest request = server.TakeRequest();
  EXPECT_EQ(request.headers["idempotency-key"], "k-1");
  EXPECT_EQ(json::parse(request.body), json::parse(R"({"image":"nginx:alpine",
      "startup":{"mode":"command","argv":["nginx","-g","daemon off;"]}})"));
  EXPECT_EQ(json::parse(outcome.out), json::parse(kSandbox));
}

TEST(AdaptCli, RunImageSendsImageStartup) {
  TestHttpServer server(CannedResponse(201, kSandbox));
  Outcome outcome = RunCli(
      server.url(), {"sandbox", "create", "--no-wait", "--image", "nginx:alpine", "--run-image"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(json::parse(server.TakeRequest().body),
            json::parse(R"({"image":"nginx:alpine","startup":{"mode":"image"}})"));
}

TEST(AdaptCli, ListPrintsATableAndTheNextCursor) {
  TestHttpServer server(
      CannedResponse(200, std::string(R"({"items":[)") + kSandbox + R"(],"nextCursor":"c2"})"));
  Outcome outcome =
      RunCli(server.url(), {"sandbox", "list", "--limit", "50", "--query", "research"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/sandboxes?limit=50&query=research");
  EXPECT_EQ(outcome.out,
            "ID     STATUS        IMAGE      CPU  MEMORY   NAME             CREATED\n"
            "sbx_1  provisioning  debian:12  2    4096MiB  research-worker\n"
            "next cursor: c2\n");
}

TEST(AdaptCli, GlobalJsonFlagAlsoWorksAfterTheSubcommand) {
  TestHttpServer server(CannedResponse(200, R"({"items":[],"nextCursor":null})"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "list", "--json"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(json::parse(outcome.out), json::parse(R"({"items":[],"nextCursor":null})"));
}

TEST(AdaptCli, GetEscapesTheId) {
  TestHttpServer server(CannedResponse(200, kSandbox));
  Outcome outcome = RunCli(server.url(), {"sandbox", "get", "sbx_1"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/sandboxes/sbx_1");
}

TEST(AdaptCli, DeleteReportsDoneOrPending) {
  {
    TestHttpServer server(CannedResponse(204, ""));
    Outcome outcome = RunCli(server.url(), {"sandbox", "delete", "sbx_1"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_EQ(outcome.out, "deleted sbx_1\n");
    EXPECT_EQ(server.TakeRequest().method, "DELETE");
  }
  TestHttpServer server(CannedResponse(202, R"({"id":"sbx_1","status":"deleting"})"));
  EXPECT_EQ(RunCli(server.url(), {"sandbox", "delete", "sbx_1"}).out,
            "deleting sbx_1 (cleanup pending)\n");
}

TEST(AdaptCli, EventsPrintsEachDataLine) {
  TestHttpServer server(CannedResponse(200,
                                       "id: 1\nevent: status\ndata: {\"status\":\"running\"}\n\n"
                                       "id: 2\nevent: status\ndata: {\"status\":\"completed\"}\n\n",
                                       "text/event-stream"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "events", "sbx_1"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/sandboxes/sbx_1/events");
  EXPECT_EQ(outcome.out, "{\"status\":\"running\"}\n{\"status\":\"completed\"}\n");
}

TEST(AdaptCli, ServerErrorPrintsOneLineAndExitsOne) {
  TestHttpServer server(CannedResponse(
      400, R"({"error":{"code":"invalid_argument","message":"cpu must be 1..32","field":"cpu"}})"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "create", "--cpu", "64"});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(outcome.err, "adapt: cpu must be 1..32 (field: cpu)\n");
}

TEST(AdaptCli, UnreachableServerExitsOne) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Outcome outcome = RunCli(url, {"sandbox", "list"});
  EXPECT_EQ(outcome.exit_code, 1);
  EXPECT_EQ(outcome.err.rfind("adapt: cannot reach adaptd at " + url + ": ", 0), 0u);
}

TEST(AdaptCli, UsageErrorsExitTwoWithoutARequest) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Outcome bad_label = RunCli(url, {"sandbox", "create", "--label", "oops"});
  EXPECT_EQ(bad_label.exit_code, 2);
  EXPECT_EQ(bad_label.err, "adapt: --label: expected KEY=VALUE, got 'oops'\n");
  EXPECT_EQ(RunCli(url, {"sandbox", "frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunCli(url, {"sandbox", "list", "--", "x"}).exit_code, 2);
  EXPECT_EQ(RunCli(url, {"sandbox", "get"}).exit_code, 2);
  EXPECT_EQ(RunCli(url, {"sandbox", "create", "--data", "/nonexistent/body.json"}).exit_code, 2);
}

TEST(AdaptCli, HelpExitsZero) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(RunAdapt({"sandbox", "create", "--help"}, in, out, err), 0);
  EXPECT_NE(out.str().find("--run-image"), std::string::npos);
}

TEST(AdaptCli, OrgCreateAndKeyCreate) {
  {
    TestHttpServer server(CannedResponse(201, R"({"id":"org_1","name":"acme","createdAt":"t"})"));
    Outcome outcome = RunCli(server.url(), {"org", "create", "acme"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    RecordedRequest request = server.TakeRequest();
    EXPECT_EQ(request.target, "/v1/orgs");
    EXPECT_EQ(json::parse(request.body), json({{"name", "acme"}}));
    EXPECT_NE(outcome.out.find("org_1"), std::string::npos);
  }
  TestHttpServer server(CannedResponse(201, R"({"id":"key_1","orgId":"org_1","key":"adapt_xyz"})"));
  Outcome outcome = RunCli(server.url(), {"key", "create", "--org", "org_1", "--name", "ci"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  RecordedRequest request = server.TakeRequest();
  EXPECT_EQ(request.target, "/v1/orgs/org_1/keys");
  EXPECT_EQ(json::parse(request.body), json({{"name", "ci"}}));
  EXPECT_EQ(outcome.out, "adapt_xyz\n");
}

TEST(AdaptCli, KeyCommandsWithoutOrgUseTheCallersOwnKeys) {
  {
    TestHttpServer server(
        CannedResponse(201, R"({"id":"key_2","orgId":"org_1","key":"adapt_own"})"));
    Outcome outcome = RunCli(server.url(), {"key", "create", "--name", "ci", "--ttl", "3600"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    RecordedRequest request = server.TakeRequest();
    EXPECT_EQ(request.target, "/v1/keys");
    EXPECT_EQ(json::parse(request.body), json({{"name", "ci"}, {"ttlSeconds", 3600}}));
    EXPECT_EQ(outcome.out, "adapt_own\n");
  }
  {
    TestHttpServer server(
        CannedResponse(200, R"({"items":[{"id":"key_2","name":"ci","admin":false,"createdAt":"t1",)"
                            R"("expiresAt":null}],"nextCursor":null})"));
    Outcome outcome = RunCli(server.url(), {"key", "ls"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_EQ(server.TakeRequest().target, "/v1/keys");
    EXPECT_NE(outcome.out.find("never"), std::string::npos) << outcome.out;
  }
  TestHttpServer server(CannedResponse(204, ""));
  Outcome outcome = RunCli(server.url(), {"key", "rm", "key_2"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  RecordedRequest request = server.TakeRequest();
  EXPECT_EQ(request.method, "DELETE");
  EXPECT_EQ(request.target, "/v1/keys/key_2");
}

TEST(AdaptCli, OrgListPrintsATable) {
  TestHttpServer server(
      CannedResponse(200, R"({"items":[{"id":"org_1","name":"admin","status":"active",)"
                          R"("createdAt":"t1"}],"nextCursor":null})"));
  Outcome outcome = RunCli(server.url(), {"org", "list"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "ID     NAME   STATUS  CREATED\norg_1  admin  active  t1\n");
}

TEST(AdaptCli, OrgDeleteSendsTheConfirmationAndReportsARefusal) {
  {
    TestHttpServer server(CannedResponse(204, ""));
    Outcome outcome = RunCli(server.url(), {"org", "delete", "org_1", "--confirm", "acme co"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    RecordedRequest request = server.TakeRequest();
    EXPECT_EQ(request.method, "DELETE");
    EXPECT_EQ(request.target, "/v1/orgs/org_1?confirm=acme%20co");
    EXPECT_EQ(outcome.out, "deleted organization org_1\n");
  }
  TestHttpServer server(CannedResponse(
      409, R"({"error":{"code":"conflict","message":"organization 'acme' still has 1 sandbox"}})"));
  Outcome outcome = RunCli(server.url(), {"org", "delete", "org_1", "--confirm", "acme"});
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_NE(outcome.err.find("still has 1 sandbox"), std::string::npos) << outcome.err;
  EXPECT_EQ(outcome.out, "");
}

TEST(AdaptCli, UserAddPrintsTheChosenPasswordOnceOrSendsTheOneOnStdin) {
  {
    TestHttpServer server(CannedResponse(
        201, R"({"id":"usr_1","orgId":"org_1","email":"ada@example.com","createdAt":"t",)"
             R"("password":"chosen-by-adaptd"})"));
    Outcome outcome = RunCli(server.url(), {"user", "add", "org_1", "Ada@Example.com"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
    RecordedRequest request = server.TakeRequest();
    EXPECT_EQ(request.target, "/v1/orgs/org_1/users");
    EXPECT_EQ(json::parse(request.body), json({{"email", "Ada@Example.com"}}));
    EXPECT_NE(outcome.out.find("password: chosen-by-adaptd\n"), std::string::npos) << outcome.out;
  }
  TestHttpServer server(CannedResponse(
      201,
      R"({"id":"usr_2","orgId":"org_1","email":"bea@example.com","createdAt":"t","password":null})"));
  Outcome outcome =
      RunCli(server.url(), {"user", "add", "org_1", "bea@example.com", "--password-stdin"},
             "a long password\n");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(json::parse(server.TakeRequest().body),
            json({{"email", "bea@example.com"}, {"password", "a long password"}}));
  EXPECT_EQ(outcome.out.find("password:"), std::string::npos) << outcome.out;
  Outcome empty =
      RunCli(server.url(), {"user", "add", "org_1", "c@example.com", "--password-stdin"}, "");
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_NE(empty.err.find("read no password"), std::string::npos) << empty.err;
}

TEST(AdaptCli, UserListPrintsATableAndFiltersByOrganization) {
  TestHttpServer server(CannedResponse(
      200,
      R"({"items":[{"id":"usr_1","orgId":"org_1","email":"ada@example.com","createdAt":"t1"}],)"
      R"("nextCursor":null})"));
  Outcome outcome = RunCli(server.url(), {"user", "ls", "--org", "org_1"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/users?orgId=org_1");
  EXPECT_EQ(outcome.out,
            "ID     EMAIL            ORG    CREATED\nusr_1  ada@example.com  org_1  t1\n");
}

}  // namespace
}  // namespace adapt::cli
