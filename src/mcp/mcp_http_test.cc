// McpHttp's bound on tool calls: a call running on the calls pool holds a slot, a tool that
// waits (run_later) gives it back while it waits.
#include "mcp/mcp_http.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <vector>

#include "api/org_stream_limit.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

api::HttpRequest McpRequest(const json& message, const std::string& session = "") {
  api::HttpRequest r;
  r.method = "POST";
  r.path = "/mcp";
  r.headers["host"] = "127.0.0.1:8080";
  r.headers["authorization"] = "Bearer key";
  if (!session.empty()) r.headers["mcp-session-id"] = session;
  r.body = message.dump();
  return r;
}

json Call(int id, const std::string& tool) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", tool}, {"arguments", json::object()}}}};
}

// Starts a deferred answer; its future gets the response.
std::future<api::HttpResponse> Begin(const api::HttpResponse& r) {
  auto promise = std::make_shared<std::promise<api::HttpResponse>>();
  auto future = promise->get_future();
  if (!r.deferred) {
    promise->set_value(r);
    return future;
  }
  r.deferred->Start([promise](api::HttpResponse answer) { promise->set_value(answer); });
  return future;
}

class McpHttpBound : public ::testing::Test {
 protected:
  void SetUp() override {
    Tool blocking;
    blocking.name = "blocking";
    blocking.input_schema = {{"type", "object"}};
    blocking.run = [this](ToolContext&, const json&) {
      release_.wait();
      return ToolResult::Ok({{"done", true}});
    };
    tools_.Add(blocking);
    Tool waiting;
    waiting.name = "waiting";
    waiting.input_schema = {{"type", "object"}};
    waiting.run_later = [this](ToolContext&, const json&, ToolReply reply) {
      std::lock_guard lock(mu_);
      replies_.push_back(std::move(reply));
    };
    tools_.Add(waiting);
    http_ = std::make_unique<McpHttp>(
        tools_, [](const std::string&) { return Result<core::Principal>(core::Principal{}); },
        "127.0.0.1", pool_, 1);
    api::HttpResponse init =
        http_->Post(McpRequest({{"jsonrpc", "2.0"},
                                {"id", 1},
                                {"method", "initialize"},
                                {"params", {{"protocolVersion", "2025-11-25"}}}}));
    ASSERT_EQ(init.status, 200) << init.body;
    for (const auto& [k, v] : init.headers)
      if (k == "Mcp-Session-Id") session_ = v;
    ASSERT_FALSE(session_.empty());
  }
  void TearDown() override {
    released_.set_value();
    pool_.join();
  }

  size_t Waiting() {
    std::lock_guard lock(mu_);
    return replies_.size();
  }

  boost::asio::thread_pool pool_{1};
  ToolRegistry tools_;
  std::unique_ptr<McpHttp> http_;
  std::string session_;
  std::promise<void> released_;
  std::shared_future<void> release_ = released_.get_future().share();
  std::mutex mu_;
  std::vector<ToolReply> replies_;
};

TEST_F(McpHttpBound, ToolsThatWaitHoldNoSlotAndAnswerWhenTheirWaitEnds) {
  std::vector<std::future<api::HttpResponse>> answers;
  for (int i = 0; i < 20; ++i) {
    // The one slot is busy only while a call's first part runs: the next gets in right after.
    api::HttpResponse r;
    for (int tries = 0; tries < 1000; ++tries) {
      r = http_->Post(McpRequest(Call(10 + i, "waiting"), session_));
      if (r.status != 429) break;
      std::this_thread::sleep_for(2ms);
    }
    ASSERT_TRUE(r.deferred) << r.status << " " << r.body;
    answers.push_back(Begin(r));
    for (int tries = 0; tries < 1000 && Waiting() < static_cast<size_t>(i + 1); ++tries)
      std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(Waiting(), 20u);  // twenty waits in, with one call thread and a bound of one
  for (auto& a : answers) EXPECT_EQ(a.wait_for(0s), std::future_status::timeout);
  {
    std::lock_guard lock(mu_);
    for (auto& reply : replies_) reply(ToolResult::Ok({{"waited", true}}));
  }
  for (auto& a : answers) {
    ASSERT_EQ(a.wait_for(5s), std::future_status::ready);
    api::HttpResponse r = a.get();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(json::parse(r.body)["result"]["structuredContent"]["waited"], true) << r.body;
  }
}

TEST_F(McpHttpBound, ACallPastTheBoundOfRunningCallsIsRefusedWithRetryAfter) {
  auto first = Begin(http_->Post(McpRequest(Call(10, "blocking"), session_)));
  api::HttpResponse second = http_->Post(McpRequest(Call(11, "blocking"), session_));
  EXPECT_EQ(second.status, 429);
  EXPECT_NE(second.body.find("too many MCP tool calls"), std::string::npos) << second.body;
  bool retry_after = false;
  for (const auto& [k, v] : second.headers) retry_after = retry_after || k == "Retry-After";
  EXPECT_TRUE(retry_after);
  released_.set_value();
  ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(first.get().status, 200);
  released_ = std::promise<void>();  // TearDown sets it again
}

// A session's initialize, returning its Mcp-Session-Id.
std::string Initialize(McpHttp& http, const std::string& version) {
  api::HttpResponse init = http.Post(McpRequest({{"jsonrpc", "2.0"},
                                                 {"id", 1},
                                                 {"method", "initialize"},
                                                 {"params", {{"protocolVersion", version}}}}));
  for (const auto& [k, v] : init.headers)
    if (k == "Mcp-Session-Id") return v;
  return "";
}

// A tool call with a progress token is answered as an event stream, which counts toward the
// organization's open streams like the API's: past the cap it is a JSON-RPC 429 and the tool
// never runs; a stream let go frees its place.
TEST(McpHttpStreams, AProgressStreamPastTheOrganizationsStreamCapIsRefusedAndNeverRuns) {
  ToolRegistry tools;
  int runs = 0;
  Tool counted;
  counted.name = "counted";
  counted.input_schema = {{"type", "object"}};
  counted.run = [&runs](ToolContext&, const json&) {
    ++runs;
    return ToolResult::Ok({{"done", true}});
  };
  tools.Add(counted);
  boost::asio::thread_pool pool{1};
  McpHttp http(
      tools, [](const std::string&) { return Result<core::Principal>(core::Principal{}); },
      "127.0.0.1", pool, 8);
  api::OrgStreamLimit limit(1);
  http.SetStreamAdmission([&limit](const std::string& org_id, api::HttpResponse stream) {
    return limit.TryAdmit(org_id, std::move(stream));
  });
  const std::string session = Initialize(http, "2025-11-25");
  ASSERT_FALSE(session.empty());
  auto with_progress = [](int id) {
    json call = Call(id, "counted");
    call["params"]["_meta"] = {{"progressToken", "t" + std::to_string(id)}};
    return call;
  };
  api::HttpResponse first = http.Post(McpRequest(with_progress(10), session));
  ASSERT_EQ(first.content_type, "text/event-stream") << first.status << " " << first.body;
  ASSERT_TRUE(first.stream);
  EXPECT_EQ(limit.Open(""), 1u);
  api::HttpResponse second = http.Post(McpRequest(with_progress(11), session));
  EXPECT_EQ(second.status, 429);
  json refusal = json::parse(second.body);
  EXPECT_EQ(refusal["id"], 11) << second.body;
  EXPECT_NE(refusal["error"]["message"].get<std::string>().find("--max-streams-per-org"),
            std::string::npos)
      << second.body;
  EXPECT_FALSE(second.stream);
  first = api::HttpResponse();  // the connection let the first stream go, never started
  EXPECT_EQ(limit.Open(""), 0u);
  api::HttpResponse third = http.Post(McpRequest(with_progress(12), session));
  EXPECT_TRUE(third.stream) << third.status << " " << third.body;
  third = api::HttpResponse();
  pool.join();
  EXPECT_EQ(runs, 0) << "no stream was started, so no tool ran";
}

TEST(McpHttpResults, ResourceLinksReachSessionsWhoseProtocolHasThemOnly) {
  ToolRegistry tools;
  Tool linking;
  linking.name = "linking";
  linking.input_schema = {{"type", "object"}};
  linking.run = [](ToolContext&, const json&) {
    ToolResult r = ToolResult::Ok({{"download_url", "http://h/f"}});
    r.links.push_back({"http://h/f", "f.txt", "text/plain", 3, "a file"});
    return r;
  };
  tools.Add(linking);
  boost::asio::thread_pool pool(1);
  McpHttp http(
      tools, [](const std::string&) { return Result<core::Principal>(core::Principal{}); },
      "127.0.0.1", pool, 1);
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
    std::string session = Initialize(http, version);
    ASSERT_FALSE(session.empty()) << version;
    auto answer = Begin(http.Post(McpRequest(Call(2, "linking"), session)));
    ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
    json result = json::parse(answer.get().body)["result"];
    EXPECT_EQ(result["content"][0]["type"], "text") << version;
    EXPECT_EQ(result["structuredContent"]["download_url"], "http://h/f") << version;
    if (std::string(version) == "2025-03-26") {
      EXPECT_EQ(result["content"].size(), 1u) << result.dump();
    } else {
      ASSERT_EQ(result["content"].size(), 2u) << result.dump();
      EXPECT_EQ(result["content"][1], json({{"type", "resource_link"},
                                            {"uri", "http://h/f"},
                                            {"name", "f.txt"},
                                            {"mimeType", "text/plain"},
                                            {"size", 3},
                                            {"description", "a file"}}));
    }
  }
  pool.join();
}

TEST(McpHttpResults, AnOversizedBodyToMcpIsAJsonRpcErrorAndOtherPathsAreLeftToTheApi) {
  auto answer = OversizedMcpBody("/mcp", 1024);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 413);
  json body = json::parse(answer->body);
  EXPECT_EQ(body["jsonrpc"], "2.0");
  EXPECT_TRUE(body["id"].is_null());
  EXPECT_EQ(body["error"]["code"], rpc::kInvalidRequest);
  EXPECT_NE(body["error"]["message"].get<std::string>().find("1024 bytes"), std::string::npos);
  EXPECT_FALSE(OversizedMcpBody("/v1/sandboxes", 1024));
  EXPECT_FALSE(OversizedMcpBody("/mcpx", 1024));
}

}  // namespace
}  // namespace adapt::mcp
