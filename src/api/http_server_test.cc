#include "api/http_server_test_support.h"

namespace adapt::api {
namespace {

using namespace std::chrono_literals;

TEST_F(HttpServerTest, HandlerSeesDecodedRequest) {
  std::promise<HttpRequest> seen;
  Serve([&](const HttpRequest& request) {
    seen.set_value(request);
    HttpResponse response;
    response.status = 201;
    response.headers.push_back({"X-Reply", "yes"});
    response.body = R"({"ok":true})";
    return response;
  });
  Client client(port());
  ASSERT_TRUE(client.connected());
  client.Send(
      "POST /v1/a%20b/c+d?x=1&name=hello+world&amp=%26%3D&flag HTTP/1.1\r\n"
      "Host: localhost\r\nX-Custom: Value\r\nContent-Length: 5\r\n\r\nhello");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, R"({"ok":true})");
  EXPECT_EQ(response->headers["content-type"], "application/json");
  EXPECT_EQ(response->headers["content-length"], "11");
  EXPECT_EQ(response->headers["server"], "adaptd");
  EXPECT_EQ(response->headers["x-reply"], "yes");

  HttpRequest request = seen.get_future().get();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.path, "/v1/a b/c+d");
  EXPECT_EQ(request.query.at("x"), "1");
  EXPECT_EQ(request.query.at("name"), "hello world");
  EXPECT_EQ(request.query.at("amp"), "&=");
  EXPECT_EQ(request.query.at("flag"), "");
  EXPECT_EQ(request.Header("x-custom"), "Value");
  EXPECT_EQ(request.Header("host"), "localhost");
  EXPECT_EQ(request.Header("absent"), "");
  EXPECT_EQ(request.body, "hello");
  EXPECT_EQ(request.remote, "127.0.0.1");
}

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  Serve(Echo);
  Client client(port());
  client.Send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n");
  auto first = client.ReadResponse();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->body, "GET /one");
  EXPECT_EQ(first->headers.count("connection"), 0u);
  client.Send("GET /two HTTP/1.1\r\nHost: x\r\n\r\n");
  auto second = client.ReadResponse();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "GET /two");
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  Serve(Echo);
  Client client(port());
  client.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  auto a = client.ReadResponse();
  auto b = client.ReadResponse();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->body, "GET /a");
  EXPECT_EQ(b->body, "GET /b");
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  Serve(Echo);
  Client client(port());
  client.Send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->headers["connection"], "close");
  EXPECT_TRUE(client.ReadsEof());
}

TEST_F(HttpServerTest, OversizedContentLengthGets413BeforeTheBodyIsSent) {
  std::atomic<int> calls{0};
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  Serve(
      [&](const HttpRequest& request) {
        ++calls;
        return Echo(request);
      },
      options);
  Client client(port());
  client.Send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(
      response->body,
      R"({"error":{"code":"payload_too_large","message":"request body exceeds 1024 bytes"}})");
  EXPECT_EQ(response->headers["connection"], "close");
  EXPECT_TRUE(client.ReadsEof());
  EXPECT_EQ(calls, 0);
}

TEST_F(HttpServerTest, OversizedBodyGetsTheAnswerOptionsGiveForItsPath) {
  HttpServerOptions options;
  options.max_body_bytes = 16;
  options.oversized_body = [](std::string_view path, size_t limit) -> std::optional<HttpResponse> {
    if (path != "/rpc") return std::nullopt;
    HttpResponse r;
    r.status = 413;
    r.body = "rpc " + std::to_string(limit);
    return r;
  };
  Serve(Echo, options);
  for (const char* target : {"/rpc", "/rpc?x=1"}) {
    Client client(port());
    client.Send(std::string("POST ") + target +
                " HTTP/1.1\r\nHost: x\r\nContent-Length: 32\r\n\r\n");
    auto response = client.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
    EXPECT_EQ(response->body, "rpc 16");
    EXPECT_EQ(response->headers["connection"], "close");
  }
  // Chunked: the limit is found while the body is read.
  Client chunked(port());
  chunked.Send(
      "POST /rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "10\r\n0123456789abcdef\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n");
  auto response = chunked.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->body, "rpc 16");
  // Another path keeps the API's error.
  Client other(port());
  other.Send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 32\r\n\r\n");
  response = other.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_NE(response->body.find("payload_too_large"), std::string::npos);
}

TEST_F(HttpServerTest, OversizedChunkedBodyGets413) {
  HttpServerOptions options;
  options.max_body_bytes = 16;
  Serve(Echo, options);
  Client client(port());
  client.Send(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "10\r\n0123456789abcdef\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_TRUE(client.ReadsEof());
}

// Beast keeps a whole chunk-size line (with its extension) or trailer section in the
// connection's buffer, and neither the header nor the body limit counts those bytes: without a
// bound on the buffer, one connection held hundreds of MB.
TEST_F(HttpServerTest, AnEndlessChunkExtensionOrTrailerGets431) {
  Serve(Echo);
  const std::string flood(300 * 1024, 'a');
  for (const std::string& request :
       {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=" + flood,
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n"
        "X-Trailer: " +
            flood}) {
    Client client(port());
    client.Send(request);
    auto response = client.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 431) << response->body;
    EXPECT_TRUE(client.ReadsEof());
  }
  Client after(port());
  after.Send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  auto ok = after.ReadResponse();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

// A Transfer-Encoding Beast does not frame by (chunked not last) would leave the body to be
// read as the next request: refused, and nothing after it on the connection is served.
TEST_F(HttpServerTest, ATransferEncodingNotEndingInChunkedGets400AndCloses) {
  Serve(Echo);
  for (const char* coding : {"gzip", "chunked, gzip", "identity"}) {
    Client client(port());
    client.Send(std::string("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ") + coding +
                "\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << coding;
    EXPECT_EQ(response->status, 400) << coding;
    EXPECT_NE(response->body.find("Transfer-Encoding"), std::string::npos) << response->body;
    EXPECT_TRUE(client.ReadsEof()) << coding;
  }
}

TEST_F(HttpServerTest, AnHttp11RequestWithoutHostOrAnyWithTwoGets400AndCloses) {
  Serve(Echo);
  for (const char* head : {"GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                           "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"}) {
    Client client(port());
    client.Send(head);
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << head;
    EXPECT_EQ(response->status, 400) << head;
    EXPECT_NE(response->body.find("Host"), std::string::npos) << response->body;
    EXPECT_TRUE(client.ReadsEof()) << head;
  }
  // HTTP/1.0 may leave it out.
  Client old(port());
  old.Send("GET / HTTP/1.0\r\n\r\n");
  auto response = old.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpServerTest, MalformedRequestGets400AndCloses) {
  Serve(Echo);
  Client client(port());
  client.Send("GET / HTTP/1.1\r\nHost: x\r\nHeader without colon\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_EQ(response->body,
            R"({"error":{"code":"invalid_argument","message":"malformed HTTP request"}})");
  EXPECT_TRUE(client.ReadsEof());
}

TEST_F(HttpServerTest, BrokenPercentEscapeGets400) {
  Serve(Echo);
  for (const char* target : {"/a%zz", "/a%2", "/nul%00", "/?q=%G1", "*"}) {
    Client client(port());
    client.Send(std::string("GET ") + target + " HTTP/1.1\r\nHost: x\r\n\r\n");
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << target;
    EXPECT_EQ(response->status, 400) << target;
  }
}

TEST_F(HttpServerTest, OversizedHeaderGets431) {
  Serve(Echo);
  Client client(port());
  client.Send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70 * 1024, 'a') + "\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
  EXPECT_NE(response->body.find(R"("code":"invalid_argument")"), std::string::npos);
}

TEST_F(HttpServerTest, ThrowingHandlerGets500AndServerKeepsServing) {
  Serve([](const HttpRequest& request) -> HttpResponse {
    if (request.path == "/boom") throw std::runtime_error("handler bug");
    return Echo(request);
  });
  Client client(port());
  client.Send("GET /boom HTTP/1.1\r\nHost: x\r\n\r\n");
  auto failed = client.ReadResponse();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, 500);
  EXPECT_EQ(failed->body, R"({"error":{"code":"internal","message":"internal error"}})");
  client.Send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  auto ok = client.ReadResponse();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpServerTest, HeadGetsContentLengthWithoutBody) {
  Serve(Echo);
  Client client(port());
  client.Send("HEAD /thing HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->headers["content-length"], "11");  // "HEAD /thing"
  auto next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "GET /next");
}

TEST_F(HttpServerTest, NoContentHasNoContentLength) {
  Serve([](const HttpRequest&) {
    HttpResponse response;
    response.status = 204;
    response.headers.push_back({"X-Evil", "a\r\nInjected: yes"});
    return response;
  });
  Client client(port());
  client.Send("DELETE /x HTTP/1.1\r\nHost: x\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 204);
  EXPECT_EQ(response->headers.count("content-length"), 0u);
  EXPECT_EQ(response->headers.count("injected"), 0u);
}

TEST_F(HttpServerTest, ExpectContinueGets100BeforeTheBody) {
  Serve([](const HttpRequest& request) {
    HttpResponse response;
    response.body = request.body;
    return response;
  });
  Client client(port());
  client.Send("PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
  auto interim = client.ReadHead();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  client.Send("data");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "data");
}

TEST_F(HttpServerTest, BlockingHandlerDoesNotStallOtherConnections) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  HttpServerOptions options;
  options.io_threads = 1;
  Serve(
      [&](const HttpRequest& request) {
        if (request.path == "/slow") released.wait();
        return Echo(request);
      },
      options);
  Client slow(port());
  slow.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  Client fast(port());
  fast.Send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n");
  auto fast_response = fast.ReadResponse();
  ASSERT_TRUE(fast_response);
  EXPECT_EQ(fast_response->body, "GET /fast");
  release.set_value();
  auto slow_response = slow.ReadResponse();
  ASSERT_TRUE(slow_response);
  EXPECT_EQ(slow_response->body, "GET /slow");
}

TEST_F(HttpServerTest, ASilentConnectionIsClosedAtTheHeaderTimeout) {
  HttpServerOptions options;
  options.header_timeout = 1s;
  Serve(Echo, options);
  Client client(port());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ReadsEof());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

class StreamingTest : public HttpServerTest {
 protected:
  void ServeStream() {
    Serve([this](const HttpRequest&) {
      HttpResponse response;
      response.content_type = "text/event-stream";
      response.stream = stream_;
      return response;
    });
  }
  std::shared_ptr<RecordingStream> stream_ = std::make_shared<RecordingStream>();
};

TEST_F(StreamingTest, DeliversChunksAndStopsAfterTheClientCloses) {
  ServeStream();
  Client client(port());
  client.Send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = client.ReadHead();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->headers["content-type"], "text/event-stream");
  EXPECT_EQ(head->headers["cache-control"], "no-cache");
  EXPECT_EQ(head->headers["x-accel-buffering"], "no");
  EXPECT_EQ(head->headers["connection"], "close");
  EXPECT_EQ(head->headers.count("content-length"), 0u);
  EXPECT_EQ(client.ReadUntil("\n\n"), "data: hello\n\n");

  auto sink = stream_->WaitStarted();
  ASSERT_TRUE(sink);
  EXPECT_TRUE(sink->Send("data: one\n\n"));
  EXPECT_TRUE(sink->Send("data: two\n\n"));
  EXPECT_EQ(client.ReadUntil("two\n\n"), "data: one\n\ndata: two\n\n");

  client.Close();
  EXPECT_EQ(stream_->WaitStopped(), 1);
  EXPECT_TRUE(sink->Closed());
  EXPECT_FALSE(sink->Send("data: late\n\n"));
}

TEST_F(StreamingTest, SinkCloseEndsTheResponseAfterQueuedData) {
  ServeStream();
  Client client(port());
  client.Send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadHead());
  auto sink = stream_->WaitStarted();
  ASSERT_TRUE(sink);
  sink->Send("data: last\n\n");
  sink->Close();
  EXPECT_FALSE(sink->Send("data: after close\n\n"));
  EXPECT_EQ(client.ReadUntil("last\n\n"), "data: hello\n\ndata: last\n\n");
  EXPECT_TRUE(client.ReadsEof());
  EXPECT_EQ(stream_->WaitStopped(), 1);
}

TEST_F(StreamingTest, StopWithAnOpenStreamReturnsPromptly) {
  ServeStream();
  Client client(port());
  client.Send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadHead());
  auto sink = stream_->WaitStarted();
  ASSERT_TRUE(sink);

  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(stream_->WaitStopped(), 1);
  EXPECT_FALSE(sink->Send("data: after stop\n\n"));
  EXPECT_EQ(client.ReadUntil("\n\n"), "data: hello\n\n");
  EXPECT_TRUE(client.ReadsEof());
}

// Servers on loopback made and started by each test itself.
class HttpServerStartTest : public ::testing::Test {
 protected:
  // A server answering with Echo on `port` (0: a free one).
  std::unique_ptr<HttpServer> Server(uint16_t port = 0) {
    HttpServerOptions options;
    options.port = port;
    return std::make_unique<HttpServer>(options, Echo, workers_);
  }

  boost::asio::thread_pool workers_{1};
};

TEST_F(HttpServerStartTest, FailsWithTheAddressWhenThePortIsTaken) {
  auto first = Server();
  ASSERT_TRUE(first->Start().ok());
  Status status = Server(first->port())->Start();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("127.0.0.1:" + std::to_string(first->port())), std::string::npos)
      << status.message();
}

TEST_F(HttpServerStartTest, CanRestartAfterStop) {
  auto server = Server();
  ASSERT_TRUE(server->Start().ok());
  server->Stop();
  ASSERT_TRUE(server->Start().ok());
  Client client(server->port());
  client.Send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /again");
}

// Listen holds the address from the start: a second server is refused it before the first
// accepts, and a connection made in between is answered once the first starts.
TEST_F(HttpServerStartTest, ListenHoldsTheAddressAndStartServesWhatWaited) {
  auto first = Server();
  ASSERT_TRUE(first->Listen().ok());
  ASSERT_NE(first->port(), 0);
  EXPECT_FALSE(Server(first->port())->Listen().ok());
  Client early(first->port());
  ASSERT_TRUE(early.connected());
  early.Send("GET /early HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(first->Start().ok());
  auto response = early.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /early");
}

TEST_F(HttpServerStartTest, StopAfterListenAloneFreesTheAddress) {
  auto first = Server();
  ASSERT_TRUE(first->Listen().ok());
  first->Stop();
  EXPECT_TRUE(Server(first->port())->Start().ok());
}

}  // namespace
}  // namespace adapt::api
