// --idempotency-key on the creates that take it: each command sends the key as the
// Idempotency-Key header (and sends none without the flag), and `adapt key create` says
// plainly that a replay cannot show the key text again.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "cli/test_http_server.h"

namespace adapt::cli {
namespace {

using testing::CannedResponse;
using testing::Outcome;
using testing::RecordedRequest;
using testing::RunCli;
using testing::TestHttpServer;

struct KeyedCommand {
  std::vector<std::string> args;  // without --idempotency-key
  int status;                     // what the canned adaptd answers
  std::string answer;
  std::string target;  // where the command must post
};

const char* kImage = R"({"id":"img_1","status":"pulling","reference":"r/app:1"})";

std::vector<KeyedCommand> Commands(const std::string& archive) {
  return {
      {{"sandbox", "expose", "sbx_1", "8000"},
       201,
       R"({"id":"ep_1","port":8000,"url":"https://h","httpUrl":"http://h"})",
       "/v1/sandboxes/sbx_1/endpoints"},
      {{"--json", "key", "create", "--name", "ci"},
       201,
       R"({"id":"key_1","name":"ci","key":"adapt_x"})",
       "/v1/keys"},
      {{"--json", "app", "deploy", "sbx_1", "--start", "serve", "--port", "8000", "--no-wait"},
       202,
       R"({"id":"op_1","kind":"app.deploy","phase":"Running"})",
       "/v1/apps"},
      {{"--json", "image", "pull", "r/app:1", "--detach"}, 202, kImage, "/v1/images"},
      {{"--json", "image", "import", archive}, 201, kImage, "/v1/images/import"},
      {{"--json", "sandbox", "commit", "sbx_1", "--name", "saved"},
       202,
       kImage,
       "/v1/sandboxes/sbx_1/image"},
      {{"--json", "sandbox", "checkpoint", "create", "sbx_1", "one"},
       201,
       R"({"name":"one","sandboxId":"sbx_1","operationId":"op_2"})",
       "/v1/sandboxes/sbx_1/checkpoints"},
      {{"--json", "object", "token", "create", "--name", "rclone"},
       201,
       R"({"id":"stk_1","accessKeyId":"stk_1","secretAccessKey":"s","token":"stk_1.s"})",
       "/v1/storage-tokens"},
      {{"--json", "site", "publish", "web"},
       201,
       R"({"id":"site_1","name":"site","releaseId":"rel_1","url":"https://s"})",
       "/v1/sites"},
  };
}

class IdempotencyFlags : public ::testing::Test {
 protected:
  void SetUp() override {
    archive_ = ::testing::TempDir() + "adapt-idempotency-flags.tar";
    std::ofstream(archive_) << "not really a tar: the canned adaptd does not read it";
  }
  void TearDown() override { std::remove(archive_.c_str()); }

  std::string archive_;
};

TEST_F(IdempotencyFlags, EachCreateSendsTheKeyAsTheIdempotencyKeyHeader) {
  for (const auto& command : Commands(archive_)) {
    TestHttpServer server(CannedResponse(command.status, command.answer));
    std::vector<std::string> args = command.args;
    args.insert(args.end(), {"--idempotency-key", "retry-7"});
    Outcome outcome = RunCli(server.url(), args);
    EXPECT_EQ(outcome.exit_code, 0) << command.target << ": " << outcome.err;
    RecordedRequest request = server.TakeRequest();
    EXPECT_EQ(request.method, "POST") << command.target;
    EXPECT_EQ(request.target.substr(0, request.target.find('?')), command.target);
    EXPECT_EQ(request.headers["idempotency-key"], "retry-7") << command.target;
  }
}

TEST_F(IdempotencyFlags, WithoutTheFlagNoKeyIsSent) {
  for (const auto& command : Commands(archive_)) {
    TestHttpServer server(CannedResponse(command.status, command.answer));
    Outcome outcome = RunCli(server.url(), command.args);
    EXPECT_EQ(outcome.exit_code, 0) << command.target << ": " << outcome.err;
    RecordedRequest request = server.TakeRequest();
    EXPECT_EQ(request.headers.count("idempotency-key"), 0u) << command.target;
  }
}

TEST_F(IdempotencyFlags, AKeyCreateReplayWithoutTheKeyTextSaysItWasShownOnce) {
  TestHttpServer server(CannedResponse(201, R"({"id":"key_1","name":"ci"})"));
  Outcome outcome =
      RunCli(server.url(), {"key", "create", "--name", "ci", "--idempotency-key", "retry-7"});
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_NE(outcome.err.find("key_1"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("shown only once"), std::string::npos) << outcome.err;
}

TEST_F(IdempotencyFlags, AStorageTokenIsPrintedAsS3VariablesAndAReplaySaysItWasShownOnce) {
  TestHttpServer made(CannedResponse(
      201, R"({"id":"stk_1","name":"rc","accessKeyId":"stk_1","secretAccessKey":"s3cr3t",)"
           R"("token":"stk_1.s3cr3t","endpoint":"http://h:8082","bucket":"objects"})"));
  Outcome outcome = RunCli(made.url(), {"object", "token", "create", "--ttl", "600"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("export AWS_ACCESS_KEY_ID=stk_1\n"), std::string::npos);
  EXPECT_NE(outcome.out.find("export AWS_SECRET_ACCESS_KEY=s3cr3t\n"), std::string::npos);
  EXPECT_NE(outcome.out.find("export AWS_ENDPOINT_URL=http://h:8082\n"), std::string::npos);
  EXPECT_EQ(made.TakeRequest().body, R"({"ttlSeconds":600})");

  TestHttpServer replayed(CannedResponse(201, R"({"id":"stk_1","accessKeyId":"stk_1"})"));
  outcome = RunCli(replayed.url(), {"object", "token", "create", "--idempotency-key", "k"});
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_NE(outcome.err.find("stk_1"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("shown only once"), std::string::npos) << outcome.err;
}

}  // namespace
}  // namespace adapt::cli
