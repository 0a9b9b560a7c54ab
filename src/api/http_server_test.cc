#include "api/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/thread_pool.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace adapt::api {
namespace {

using namespace std::chrono_literals;

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// A blocking client on raw sockets. Every read gives up after 5 s, so a server bug fails
// the test instead of hanging it.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { Close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Reads a status line and headers.
  std::optional<ClientResponse> ReadHead() {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    std::string head = buffer_.substr(0, end + 2);
    buffer_.erase(0, end + 4);
    ClientResponse response;
    size_t line_end = head.find("\r\n");
    response.status = std::stoi(head.substr(9, 3));
    for (size_t pos = line_end + 2; pos < head.size();) {
      size_t next = head.find("\r\n", pos);
      std::string line = head.substr(pos, next - pos);
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t value_start = line.find_first_not_of(' ', colon + 1);
      response.headers[name] = value_start == std::string::npos ? "" : line.substr(value_start);
      pos = next + 2;
    }
    return response;
  }

  // Reads a response framed by Content-Length (none means an empty body).
  std::optional<ClientResponse> ReadResponse() {
    auto response = ReadHead();
    if (!response) return std::nullopt;
    auto it = response->headers.find("content-length");
    size_t length = it == response->headers.end() ? 0 : std::stoul(it->second);
    while (buffer_.size() < length) {
      if (!Fill()) return std::nullopt;
    }
    response->body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return response;
  }

  // Reads until `text` arrived; returns what was read up to and including it, "" on EOF.
  std::string ReadUntil(std::string_view text) {
    size_t at;
    while ((at = buffer_.find(text)) == std::string::npos) {
      if (!Fill()) return "";
    }
    std::string out = buffer_.substr(0, at + text.size());
    buffer_.erase(0, at + text.size());
    return out;
  }

  // True when the server closes the connection with nothing more to read.
  bool ReadsEof() {
    if (!buffer_.empty()) return false;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  bool Fill() {
    char chunk[4096];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

// Records the stream's life; Start sends one event at once.
class RecordingStream : public ResponseStream {
 public:
  void Start(std::shared_ptr<StreamSink> sink) override {
    std::lock_guard lock(mu_);
    sink->Send("data: hello\n\n");
    sink_ = std::move(sink);
    changed_.notify_all();
  }
  void Stop() override {
    std::lock_guard lock(mu_);
    ++stops_;
    changed_.notify_all();
  }
  std::shared_ptr<StreamSink> WaitStarted() {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, 5s, [&] { return sink_ != nullptr; });
    return sink_;
  }
  int WaitStopped() {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, 5s, [&] { return stops_ > 0; });
    return stops_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::shared_ptr<StreamSink> sink_;
  int stops_ = 0;
};

HttpResponse Echo(const HttpRequest& request) {
  HttpResponse response;
  response.body = request.method + " " + request.path;
  return response;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Serve(HttpHandler handler, HttpServerOptions options = {}) {
    options.port = 0;
    server_ = std::make_unique<HttpServer>(options, std::move(handler), workers_);
    Status status = server_->Start();
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_NE(server_->port(), 0);
  }
  uint16_t port() const { return server_->port(); }

  // Declared first so it outlives the server.
  boost::asio::thread_pool workers_{4};
  std::unique_ptr<HttpServer> server_;
};

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

TEST_F(HttpServerTest, MalformedRequestGets400AndCloses) {
  Serve(Echo);
  Client client(port());
  client.Send("GET / HTTP/1.1\r\nHeader without colon\r\n\r\n");
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

TEST_F(HttpServerTest, IdleConnectionIsClosedAfterTheTimeout) {
  HttpServerOptions options;
  options.idle_timeout = 1s;
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

TEST(HttpServerStartTest, FailsWithTheAddressWhenThePortIsTaken) {
  boost::asio::thread_pool workers(1);
  HttpServerOptions options;
  options.port = 0;
  HttpServer first(options, Echo, workers);
  ASSERT_TRUE(first.Start().ok());
  options.port = first.port();
  HttpServer second(options, Echo, workers);
  Status status = second.Start();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("127.0.0.1:" + std::to_string(first.port())), std::string::npos)
      << status.message();
}

TEST(HttpServerStartTest, CanRestartAfterStop) {
  boost::asio::thread_pool workers(1);
  HttpServerOptions options;
  options.port = 0;
  HttpServer server(options, Echo, workers);
  ASSERT_TRUE(server.Start().ok());
  server.Stop();
  ASSERT_TRUE(server.Start().ok());
  Client client(server.port());
  client.Send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /again");
}

}  // namespace
}  // namespace adapt::api

namespace adapt::api {
namespace {

// Reads a streamed body to its end; answers "<bytes>:<checksum>" (a sum of the bytes).
HttpResponse CountBody(const HttpRequest& request) {
  HttpResponse response;
  if (!request.body_stream) {
    response.body = "not streamed:" + std::to_string(request.body.size());
    return response;
  }
  char buf[1000];
  size_t total = 0;
  unsigned long sum = 0;
  for (long n; (n = request.body_stream->Read(buf, sizeof buf)) > 0;) {
    total += static_cast<size_t>(n);
    for (long i = 0; i < n; ++i) sum += static_cast<unsigned char>(buf[i]);
  }
  response.body = std::to_string(total) + ":" + std::to_string(sum);
  return response;
}

HttpServerOptions StreamingUploads() {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  options.stream_request_body = [](std::string_view method, std::string_view path) {
    return method == "PUT" && path == "/upload";
  };
  return options;
}

TEST_F(HttpServerTest, StreamedBodiesIgnoreTheLimitAndKeepTheConnection) {
  Serve(CountBody, StreamingUploads());
  Client client(port());
  std::string body(300000, '\x01');
  client.Send("PUT /upload?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n" + body);
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "300000:300000");
  // Chunked, then a plain request on the same connection.
  client.Send(
      "PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\n\x02\x02\x02\r\n2\r\n\x01\x01\r\n0\r\n\r\n");
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "5:8");
  client.Send("PUT /other HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "not streamed:3");
  // Other routes keep their limit.
  client.Send("PUT /other HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
}

TEST_F(HttpServerTest, StreamedBodyAnswersContinueAndUnreadBodiesCloseTheConnection) {
  Serve(
      [](const HttpRequest& request) {
        HttpResponse response;
        if (request.query.count("read")) return CountBody(request);
        response.status = 409;  // answered without reading the body
        return response;
      },
      StreamingUploads());
  Client client(port());
  client.Send(
      "PUT /upload?read=1 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
      "Content-Length: 2\r\n\r\n");
  EXPECT_NE(client.ReadUntil("100 Continue\r\n\r\n"), "");
  client.Send("\x05\x05");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "2:10");

  Client other(port());
  other.Send("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial");
  response = other.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 409);
  EXPECT_EQ(response->headers["connection"], "close");
}

TEST_F(HttpServerTest, StreamedBodyReadFailsWhenTheClientLeaves) {
  std::promise<long> last;
  Serve(
      [&](const HttpRequest& request) {
        char buf[100];
        long n;
        while ((n = request.body_stream->Read(buf, sizeof buf)) > 0) {
        }
        last.set_value(n);
        return HttpResponse{};
      },
      StreamingUploads());
  {
    Client client(port());
    client.Send("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc");
  }
  auto future = last.get_future();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(future.get(), -1);
}

// Sends `total` bytes through WaitForRoom/Send from a thread of its own, with a length.
class BulkStream : public ResponseStream, public std::enable_shared_from_this<BulkStream> {
 public:
  explicit BulkStream(size_t total) : total_(total) {}
  void Start(std::shared_ptr<StreamSink> sink) override {
    std::thread([self = shared_from_this(), sink] {
      size_t sent = 0;
      while (sent < self->total_ && sink->WaitForRoom(64 * 1024)) {
        size_t n = std::min<size_t>(16 * 1024, self->total_ - sent);
        if (!sink->Send(std::string(n, 'b'))) return;
        sent += n;
      }
      sink->Close();
    }).detach();
  }
  void Stop() override {}

 private:
  size_t total_;
};

TEST_F(HttpServerTest, StreamWithLengthAndBackpressureDeliversEverything) {
  static constexpr size_t kTotal = 20 << 20;  // more than the 8 MiB a slow client may have queued
  Serve([](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "application/octet-stream";
    response.stream_length = kTotal;
    response.stream = std::make_shared<BulkStream>(kTotal);
    return response;
  });
  Client client(port());
  client.Send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(300ms);  // a slow reader: the producer must wait, not overflow
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->headers["content-length"], std::to_string(kTotal));
  EXPECT_EQ(response->body.size(), kTotal);
  EXPECT_EQ(response->body.find_first_not_of('b'), std::string::npos);
}

}  // namespace
}  // namespace adapt::api
