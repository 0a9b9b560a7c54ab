// The list commands against a canned adaptd: each asks for the page --limit and --cursor name
// (beside its own filters), reads `items`, and prints the next page's cursor under the table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "cli/test_http_server.h"

namespace adapt::cli {
namespace {

using testing::CannedResponse;
using testing::Outcome;
using testing::RunCli;
using testing::TestHttpServer;

struct ListCase {
  std::vector<std::string> args;  // before --limit 2 --cursor c9
  std::string target;             // the request it makes
  std::string item;               // one item of the canned page
  std::string shown;              // what of the item the table shows
};

TEST(ListPageCommands, EachSendsLimitAndCursorAndPrintsTheNextCursor) {
  const std::vector<ListCase> cases = {
      {{"endpoint", "ls", "sbx_1"},
       "/v1/sandboxes/sbx_1/endpoints?limit=2&cursor=c9",
       R"({"id":"ep_1","port":8000,"url":"https://a","httpUrl":"http://a"})",
       "ep_1"},
      {{"endpoint", "ls"}, "/v1/endpoints?limit=2&cursor=c9", R"({"id":"ep_2","port":80})", "ep_2"},
      {{"storage", "ls"},
       "/v1/storage?limit=2&cursor=c9",
       R"({"name":"notes","sizeMiB":64})",
       "notes"},
      {{"user", "ls", "--org", "org_1"},
       "/v1/users?orgId=org_1&limit=2&cursor=c9",
       R"({"id":"usr_1","email":"a@example.com"})",
       "a@example.com"},
      {{"key", "ls"}, "/v1/keys?limit=2&cursor=c9", R"({"id":"key_1","name":"ci"})", "key_1"},
      {{"admin", "plan", "ls"},
       "/v1/plans?limit=2&cursor=c9",
       R"({"id":"pro","name":"Pro"})",
       "Pro"},
      {{"job", "ls"}, "/v1/jobs?limit=2&cursor=c9", R"({"id":"job_1","status":"queued"})", "job_1"},
      {{"run", "ls", "--job", "job_1"},
       "/v1/runs?jobId=job_1&limit=2&cursor=c9",
       R"({"id":"run_1","jobId":"job_1"})",
       "run_1"},
      {{"object", "token", "ls"},
       "/v1/storage-tokens?limit=2&cursor=c9",
       R"({"id":"stk_1","name":"rclone","revoked":false})",
       "rclone"},
      {{"object", "artifacts", "sbx_1"},
       "/v1/sandboxes/sbx_1/artifacts?limit=2&cursor=c9",
       R"({"key":"artifacts/sbx_1/out.csv","size":3})",
       "artifacts/sbx_1/out.csv"},
  };
  for (const ListCase& c : cases) {
    TestHttpServer server(
        CannedResponse(200, R"({"items":[)" + c.item + R"(],"nextCursor":"c7"})"));
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--limit", "2", "--cursor", "c9"});
    Outcome outcome = RunCli(server.url(), args);
    EXPECT_EQ(outcome.exit_code, 0) << c.target << ": " << outcome.err;
    EXPECT_EQ(server.TakeRequest().target, c.target);
    EXPECT_NE(outcome.out.find(c.shown), std::string::npos) << c.target << ": " << outcome.out;
    EXPECT_NE(outcome.out.find("next cursor: c7\n"), std::string::npos)
        << c.target << ": " << outcome.out;
  }
}

TEST(ListPageCommands, WithoutOptionsTheServersDefaultPageIsAskedFor) {
  TestHttpServer server(CannedResponse(200, R"({"items":[],"nextCursor":null})"));
  Outcome outcome = RunCli(server.url(), {"storage", "ls"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(server.TakeRequest().target, "/v1/storage");
  EXPECT_EQ(outcome.out.find("next cursor"), std::string::npos) << outcome.out;
}

}  // namespace
}  // namespace adapt::cli
