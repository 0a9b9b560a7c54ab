// The wait for a sandbox to leave provisioning, against a scripted adaptd.
#include "cli/sandbox_wait.h"

#include <gtest/gtest.h>

#include "cli/test_http_server.h"

namespace adapt::cli {
namespace {

using nlohmann::json;
using testing::CannedExchange;
using testing::CannedResponse;
using testing::OpenEventStream;
using testing::RecordedRequest;
using testing::TestHttpServer;

const json kProvisioning = {{"id", "sbx_1"}, {"status", "provisioning"}};

std::string Event(int id, const std::string& status) {
  return "id: " + std::to_string(id) +
         "\nevent: status\ndata: " + json({{"sandboxId", "sbx_1"}, {"status", status}}).dump() +
         "\n\n";
}

CannedExchange Record(const std::string& status, const std::string& error = "") {
  json sandbox = {{"id", "sbx_1"}, {"status", status}};
  if (!error.empty()) sandbox["error"] = error;
  return {CannedResponse(200, sandbox.dump()), false};
}

CannedExchange ClosedStream(const std::string& events) {
  return {CannedResponse(200, events, "text/event-stream"), false};
}

TEST(WaitWhileProvisioning, ASandboxNotProvisioningIsReturnedWithoutARequest) {
  TestHttpServer server(std::vector<CannedExchange>{});
  ApiClient client(server.url(), "k");
  Result<json> sandbox = WaitWhileProvisioning(
      client, "sbx_1", {{"id", "sbx_1"}, {"status", "running"}}, std::chrono::seconds(60));
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
  EXPECT_EQ(SandboxStatus(*sandbox), "running");
  EXPECT_TRUE(server.TakeRequests().empty());
}

TEST(WaitWhileProvisioning, ZeroSecondsReturnsTheRecordAsGiven) {
  TestHttpServer server(std::vector<CannedExchange>{});
  ApiClient client(server.url(), "k");
  Result<json> sandbox = WaitWhileProvisioning(client, "sbx_1", kProvisioning, {});
  ASSERT_TRUE(sandbox.ok());
  EXPECT_EQ(SandboxStatus(*sandbox), "provisioning");
  EXPECT_TRUE(server.TakeRequests().empty());
}

TEST(WaitWhileProvisioning, FollowsTheSandboxsEventsUntilItRunsThenReadsIt) {
  TestHttpServer server(
      {ClosedStream(Event(1, "provisioning") + Event(2, "running")), Record("running")});
  ApiClient client(server.url(), "k");
  Result<json> sandbox =
      WaitWhileProvisioning(client, "sbx_1", kProvisioning, std::chrono::seconds(60));
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
  EXPECT_EQ(SandboxStatus(*sandbox), "running");
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].target, "/v1/sandboxes/sbx_1/events");
  EXPECT_EQ(requests[0].headers["authorization"], "Bearer k");
  EXPECT_EQ(requests[0].headers.count("last-event-id"), 0u);
  EXPECT_EQ(requests[1].method, "GET");
  EXPECT_EQ(requests[1].target, "/v1/sandboxes/sbx_1");
}

TEST(WaitWhileProvisioning, AnEndStatusEndsTheWaitToo) {
  TestHttpServer server(
      {ClosedStream(Event(1, "provisioning") + Event(2, "completed")), Record("completed")});
  ApiClient client(server.url(), "k");
  Result<json> sandbox =
      WaitWhileProvisioning(client, "sbx_1", kProvisioning, std::chrono::seconds(60));
  ASSERT_TRUE(sandbox.ok());
  EXPECT_EQ(SandboxStatus(*sandbox), "completed");
}

// A started sandbox's stream replays its first life (provisioning, running, hibernated,
// provisioning): an old "running" is checked against the record and the stream resumes after it.
TEST(WaitWhileProvisioning, AReplayedOldStatusIsCheckedAndTheStreamResumesAfterIt) {
  TestHttpServer server({ClosedStream(Event(6, "provisioning") + Event(7, "running")),
                         Record("provisioning"), ClosedStream(Event(9, "running")),
                         Record("running")});
  ApiClient client(server.url(), "k");
  Result<json> sandbox =
      WaitWhileProvisioning(client, "sbx_1", kProvisioning, std::chrono::seconds(60));
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
  EXPECT_EQ(SandboxStatus(*sandbox), "running");
  std::vector<RecordedRequest> requests = server.TakeRequests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2].target, "/v1/sandboxes/sbx_1/events");
  EXPECT_EQ(requests[2].headers["last-event-id"], "7");
}

TEST(WaitWhileProvisioning, GivesUpAtTheLimitWithTheLatestRecord) {
  TestHttpServer server(
      {{OpenEventStream(Event(1, "provisioning")), true}, Record("provisioning")});
  ApiClient client(server.url(), "k");
  auto started = std::chrono::steady_clock::now();
  Result<json> sandbox =
      WaitWhileProvisioning(client, "sbx_1", kProvisioning, std::chrono::seconds(1));
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(sandbox.ok()) << sandbox.status().message();
  EXPECT_EQ(SandboxStatus(*sandbox), "provisioning");
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(server.TakeRequests().size(), 2u);
}

TEST(WaitWhileProvisioning, AnErrorAnswerIsTheError) {
  TestHttpServer server(
      CannedResponse(404, R"({"error":{"code":"not_found","message":"sandbox sbx_1 not found"}})"));
  ApiClient client(server.url(), "k");
  Result<json> sandbox =
      WaitWhileProvisioning(client, "sbx_1", kProvisioning, std::chrono::seconds(60));
  ASSERT_FALSE(sandbox.ok());
  EXPECT_EQ(sandbox.status().code(), Code::kNotFound);
  EXPECT_EQ(sandbox.status().message(), "sandbox sbx_1 not found");
}

TEST(AwaitProvisioned, ARunningSandboxCostsOneRead) {
  TestHttpServer server({Record("running")});
  ApiClient client(server.url(), "k");
  EXPECT_TRUE(AwaitProvisioned(client, "sbx_1").ok());
  EXPECT_EQ(server.TakeRequests().size(), 1u);
}

TEST(AwaitProvisioned, AStoppedSandboxIsLeftToTheCommandsOwnAnswer) {
  TestHttpServer server({Record("hibernated")});
  ApiClient client(server.url(), "k");
  EXPECT_TRUE(AwaitProvisioned(client, "sbx_1").ok());
}

TEST(AwaitProvisioned, StillProvisioningAtTheLimitIsAnErrorNamingTheSandbox) {
  TestHttpServer server({Record("provisioning"),
                         {OpenEventStream(Event(1, "provisioning")), true},
                         Record("provisioning")});
  ApiClient client(server.url(), "k");
  Status status = AwaitProvisioned(client, "sbx_1", std::chrono::seconds(1));
  EXPECT_EQ(status.code(), Code::kUnavailable);
  EXPECT_EQ(status.message(), "sandbox sbx_1 is still provisioning after 1 s");
}

}  // namespace
}  // namespace adapt::cli
