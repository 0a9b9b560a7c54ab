// Streamed request bodies and streamed responses with a length and backpressure.
#include <vector>

#include "api/http_server_test_support.h"

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

// Its own suite name: gtest wants one fixture class per suite, and the fixture's anonymous
// namespace makes this TU's HttpServerTest another class.
class StreamedBodyTest : public HttpServerTest {};

HttpServerOptions StreamingUploads() {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  options.stream_request_body = [](std::string_view method, std::string_view path) {
    return method == "PUT" && path == "/upload";
  };
  return options;
}

TEST_F(StreamedBodyTest, StreamedBodiesIgnoreTheLimitAndKeepTheConnection) {
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
  // The route spelled as the router still matches it (doubled slashes, an escaped letter):
  // it streams too (read whole, a handler that read only the stream took it as empty).
  client.Send("PUT //up%6coad/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3000\r\n\r\n" +
              std::string(3000, '\x01'));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "3000:3000");
  // Other routes keep their limit.
  client.Send("PUT /other HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
}

// A body read hands over all the bytes already waiting, not one small socket read's worth:
// a streamed upload once came 512 bytes a hand-over (bench/README.md, "storage").
TEST_F(StreamedBodyTest, BodyBytesAlreadyWaitingComeInOneRead) {
  std::promise<void> sent;
  std::shared_future<void> all_sent = sent.get_future().share();
  Serve(
      [all_sent](const HttpRequest& request) {
        all_sent.wait();
        std::vector<char> buf(1 << 20);
        long first = request.body_stream->Read(buf.data(), buf.size());
        long rest = 0;
        for (long n; (n = request.body_stream->Read(buf.data(), buf.size())) > 0;) rest += n;
        HttpResponse response;
        response.body = std::to_string(first) + "+" + std::to_string(rest);
        return response;
      },
      StreamingUploads());
  Client client(port());
  // Less than the loopback's first receive window (64 KiB), so it all waits in the socket.
  const std::string body(48000, '\x03');
  client.Send("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 48000\r\n\r\n" + body);
  const bool received = client.WaitUntilReceived();
  sent.set_value();
  ASSERT_TRUE(received);
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "48000+0");
}

TEST_F(StreamedBodyTest, StreamedBodyAnswersContinueAndUnreadBodiesCloseTheConnection) {
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

// The storage gateway streams every request's body: one without a body (a GET) is done once its
// head is read, so its connection stays open for the next request.
TEST_F(StreamedBodyTest, ARequestWithoutABodyOnAStreamedRouteKeepsTheConnection) {
  HttpServerOptions options;
  options.stream_request_body = [](std::string_view, std::string_view) { return true; };
  Serve(CountBody, options);
  Client client(port());
  for (int i = 0; i < 2; ++i) {
    client.Send("GET /objects/a HTTP/1.1\r\nHost: x\r\n\r\n");
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->body, "0:0");
    EXPECT_NE(response->headers["connection"], "close");
  }
}

TEST_F(StreamedBodyTest, StreamedBodyReadFailsWhenTheClientLeaves) {
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

TEST_F(StreamedBodyTest, StreamWithLengthAndBackpressureDeliversEverything) {
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
