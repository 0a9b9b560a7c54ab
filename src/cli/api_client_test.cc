#include "cli/api_client.h"

#include <gtest/gtest.h>

#include "cli/test_http_server.h"

namespace adapt::cli {
namespace {

using nlohmann::json;
using testing::CannedResponse;
using testing::RecordedRequest;
using testing::TestHttpServer;

TEST(ApiClient, PostSendsMethodPathKeyHeadersAndJsonBody) {
  TestHttpServer server(CannedResponse(201, R"({"id":"sbx_1"})"));
  ApiClient client(server.url() + "/", "adapt_key1");
  Result<HttpResponse> response =
      client.Post("/v1/sandboxes", {{"cpu", 2}}, {{"Idempotency-Key", "retry-1"}});
  ASSERT_TRUE(response.ok()) << response.status().message();
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, R"({"id":"sbx_1"})");

  RecordedRequest request = server.TakeRequest();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/v1/sandboxes");
  EXPECT_EQ(request.headers["authorization"], "Bearer adapt_key1");
  EXPECT_EQ(request.headers["content-type"], "application/json");
  EXPECT_EQ(request.headers["idempotency-key"], "retry-1");
  EXPECT_EQ(json::parse(request.body), json({{"cpu", 2}}));
}

TEST(ApiClient, WithoutKeySendsNoAuthorization) {
  TestHttpServer server(CannedResponse(200, "{}"));
  ASSERT_TRUE(ApiClient(server.url(), "").Get("/v1/sandboxes?limit=5").ok());
  RecordedRequest request = server.TakeRequest();
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.target, "/v1/sandboxes?limit=5");
  EXPECT_EQ(request.headers.count("authorization"), 0u);
}

TEST(ApiClient, DeleteAnswersTheStatusWithoutBody) {
  TestHttpServer server(CannedResponse(204, ""));
  Result<HttpResponse> response = ApiClient(server.url(), "k").Delete("/v1/sandboxes/sbx_1");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 204);
  EXPECT_EQ(server.TakeRequest().method, "DELETE");
}

TEST(ApiClient, ErrorStatusIsAnAnswerNotATransportFailure) {
  TestHttpServer server(CannedResponse(404, R"({"error":{"code":"not_found","message":"no"}})"));
  Result<HttpResponse> response = ApiClient(server.url(), "k").Get("/v1/sandboxes/x");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 404);
}

TEST(ApiClient, UnreachableServerNamesTheUrl) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::UnusedPort());
  Result<HttpResponse> response = ApiClient(url, "k").Get("/healthz");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), Code::kUnavailable);
  EXPECT_EQ(response.status().message().rfind("cannot reach adaptd at " + url + ": ", 0), 0u)
      << response.status().message();
}

TEST(ApiClient, StreamDeliversEachLine) {
  TestHttpServer server(
      CannedResponse(200, "id: 1\nevent: status\ndata: {\"status\":\"running\"}\n\r\ndata: last",
                     "text/event-stream"));
  std::vector<std::string> lines;
  Result<HttpResponse> response = ApiClient(server.url(), "k").Stream("/v1/events", [&](auto line) {
    lines.emplace_back(line);
    return true;
  });
  ASSERT_TRUE(response.ok()) << response.status().message();
  EXPECT_EQ(lines, std::vector<std::string>({"id: 1", "event: status",
                                             "data: {\"status\":\"running\"}", "", "data: last"}));
  EXPECT_EQ(server.TakeRequest().headers["accept"], "text/event-stream");
}

TEST(ApiClient, StreamStopsWhenTheCallbackSaysSo) {
  TestHttpServer server(CannedResponse(200, "a\nb\nc\n", "text/event-stream"));
  int calls = 0;
  Result<HttpResponse> response =
      ApiClient(server.url(), "k").Stream("/v1/events", [&](auto) { return ++calls < 2; });
  EXPECT_TRUE(response.ok()) << response.status().message();
  EXPECT_EQ(calls, 2);
}

TEST(ApiClient, StreamErrorKeepsTheBodyForTheErrorMessage) {
  TestHttpServer server(CannedResponse(404, R"({"error":{"code":"not_found","message":"gone"}})"));
  bool called = false;
  Result<HttpResponse> response = ApiClient(server.url(), "k").Stream("/v1/x", [&](auto) {
    called = true;
    return true;
  });
  ASSERT_TRUE(response.ok());
  EXPECT_FALSE(called);
  EXPECT_EQ(ErrorFromResponse(*response).message(), "gone");
}

TEST(ErrorFromResponse, TakesMessageAndFieldFromTheErrorJson) {
  Status status = ErrorFromResponse(
      {400,
       R"({"error":{"code":"invalid_argument","message":"cpu must be 1..32","field":"cpu"}})"});
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "cpu must be 1..32");
  EXPECT_EQ(status.field(), "cpu");
}

TEST(ErrorFromResponse, SuccessIsOk) { EXPECT_TRUE(ErrorFromResponse({202, ""}).ok()); }

TEST(ErrorFromResponse, NonJsonBodyFallsBackToTheStatusAndFirstLine) {
  Status status = ErrorFromResponse({502, "Bad Gateway\nmore"});
  EXPECT_EQ(status.message(), "HTTP 502: Bad Gateway");
  EXPECT_EQ(ErrorFromResponse({500, ""}).message(), "HTTP 500");
}

TEST(ErrorFromResponse, OddlyTypedMembersDoNotThrow) {
  Status status = ErrorFromResponse({409, R"({"error":{"code":"conflict","message":7}})"});
  EXPECT_EQ(status.message(), "conflict");
  EXPECT_EQ(status.field(), "");
}

TEST(JsonOrError, ParsesSuccessAndReportsBadJson) {
  EXPECT_EQ(*JsonOrError(HttpResponse{200, R"({"a":1})"}), json({{"a", 1}}));
  EXPECT_TRUE(JsonOrError(HttpResponse{204, ""})->is_null());
  EXPECT_FALSE(JsonOrError(HttpResponse{200, "{"}).ok());
}

TEST(QueryString, EscapesValuesAndSkipsEmptyOnes) {
  EXPECT_EQ(QueryString({{"limit", "50"}, {"query", "a b&c"}, {"cursor", ""}}),
            "?limit=50&query=a%20b%26c");
  EXPECT_EQ(QueryString({{"cursor", ""}}), "");
  EXPECT_EQ(EscapeUrlComponent("sbx_1/../x"), "sbx_1%2F..%2Fx");
}

}  // namespace
}  // namespace adapt::cli
