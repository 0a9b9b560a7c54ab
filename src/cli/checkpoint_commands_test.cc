// `adapt sandbox checkpoint list` against a canned adaptd: with a sandbox id its checkpoints,
// without one the organization's (GET /v1/checkpoints) with its filters and pages; the
// organization's filter beside a sandbox id is a usage error; both take --limit and --cursor.
#include <gtest/gtest.h>

#include "cli/cli_run.h"
#include "cli/test_http_server.h"

namespace adapt::cli {
namespace {

using testing::CannedResponse;
using testing::Outcome;
using testing::RunCli;
using testing::TestHttpServer;

const char* kOrganizationPage = R"({"items":[
  {"name":"before-upgrade","sandboxId":"sbx_2","sizeBytes":4096,"createdAt":"2026-01-02T03:04:05Z",
   "keep":true,"runscVersion":"","platform":"ptrace","sandboxDeleted":true,
   "sandboxLabels":{"name":"research-worker"}},
  {"name":"nightly","sandboxId":"sbx_1","sizeBytes":512,"createdAt":"2026-01-01T00:00:00Z",
   "keep":false,"runscVersion":"","platform":"ptrace","sandboxDeleted":false,"sandboxLabels":{}}
  ],"nextCursor":"k5.sbx_1.nightly"})";

TEST(CheckpointList, WithoutAnIdListsTheOrganizationsWithFiltersAndTheNextCursor) {
  TestHttpServer server(CannedResponse(200, kOrganizationPage));
  Outcome outcome = RunCli(server.url(), {"sandbox", "checkpoint", "ls", "--kept", "--limit", "2",
                                          "--cursor", "k9.sbx_3.a"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/checkpoints?kept=true&limit=2&cursor=k9.sbx_3.a");
  EXPECT_EQ(outcome.out,
            "SANDBOX  SANDBOX NAME     SANDBOX STATE  NAME            KEEP  BYTES  CREATED\n"
            "sbx_2    research-worker  deleted        before-upgrade  yes   4096   "
            "2026-01-02T03:04:05Z\n"
            "sbx_1                     live           nightly         no    512    "
            "2026-01-01T00:00:00Z\n"
            "next cursor: k5.sbx_1.nightly\n");
}

TEST(CheckpointList, WithNoFlagsAsksForTheFirstPageOfEverything) {
  TestHttpServer server(CannedResponse(200, R"({"items":[],"nextCursor":null})"));
  Outcome outcome = RunCli(server.url(), {"--json", "sandbox", "checkpoint", "list"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/checkpoints");
  EXPECT_NE(outcome.out.find("\"nextCursor\": null"), std::string::npos) << outcome.out;
}

TEST(CheckpointList, WithAnIdListsThatSandboxsCheckpoints) {
  TestHttpServer server(CannedResponse(200, R"({"items":[{"name":"one","sizeBytes":7,
    "createdAt":"2026-01-01T00:00:00Z"}]})"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "checkpoint", "list", "sbx_1"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/sandboxes/sbx_1/checkpoints");
  EXPECT_EQ(outcome.out,
            "NAME  BYTES  CREATED\n"
            "one   7      2026-01-01T00:00:00Z\n");
}

TEST(CheckpointList, ASandboxsCheckpointsComeAPageAtATimeToo) {
  TestHttpServer server(CannedResponse(200, R"({"items":[{"name":"two","sizeBytes":7,
    "createdAt":"2026-01-02T00:00:00Z"}],"nextCursor":"k1.sbx_1.two"})"));
  Outcome outcome = RunCli(server.url(), {"sandbox", "checkpoint", "list", "sbx_1", "--limit", "1",
                                          "--cursor", "k2.sbx_1.three"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target,
            "/v1/sandboxes/sbx_1/checkpoints?limit=1&cursor=k2.sbx_1.three");
  EXPECT_NE(outcome.out.find("next cursor: k1.sbx_1.two"), std::string::npos) << outcome.out;
}

TEST(CheckpointList, KeptBesideASandboxIdIsAUsageError) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Outcome outcome = RunCli(url, {"sandbox", "checkpoint", "list", "sbx_1", "--kept"});
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find("excludes"), std::string::npos) << outcome.err;
}

}  // namespace
}  // namespace adapt::cli
