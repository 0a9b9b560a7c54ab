// What a handler keeps of a connection (a streamed body, a stream's sink, a deferred answer's
// reply) may outlive the server and its io_context: adaptd's MCP calls and producers run on
// pools of their own. Releasing it afterwards must touch nothing of the server (ASan's
// unit-asan run catches a use-after-free here), and using it must fail at once.
#include <atomic>

#include "api/http_server_test_support.h"

namespace adapt::api {
namespace {

using namespace std::chrono_literals;

class OutlivedTest : public HttpServerTest {};

// Keeps whatever the request hands over, for the test to use after the server is gone.
struct Kept {
  std::mutex mu;
  std::condition_variable arrived;
  std::shared_ptr<RequestBody> body;
  DeferredResponse::Reply reply;

  template <typename Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock lock(mu);
    return arrived.wait_for(lock, 5s, pred);
  }
};

class KeepReply : public DeferredResponse {
 public:
  explicit KeepReply(std::shared_ptr<Kept> kept) : kept_(std::move(kept)) {}
  std::chrono::steady_clock::time_point deadline() const override {
    return std::chrono::steady_clock::now() + 60s;
  }
  void Start(Reply reply) override {
    std::lock_guard lock(kept_->mu);
    kept_->reply = std::move(reply);
    kept_->arrived.notify_all();
  }
  void Expire() override {}
  void Cancel() override {}

 private:
  std::shared_ptr<Kept> kept_;
};

HttpServerOptions StreamedUploads() {
  HttpServerOptions options;
  options.stream_request_body = [](std::string_view, std::string_view path) {
    return path == "/upload";
  };
  return options;
}

TEST_F(OutlivedTest, AStreamedBodyKeptPastItsAnswerReadsNothingAndOutlivesTheServer) {
  auto kept = std::make_shared<Kept>();
  Serve(
      [kept](const HttpRequest& request) {
        std::lock_guard lock(kept->mu);
        kept->body = request.body_stream;
        kept->arrived.notify_all();
        return Echo(request);  // answered without reading the body
      },
      StreamedUploads());
  Client client(port());
  client.Send("PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  ASSERT_TRUE(kept->WaitFor([&] { return kept->body != nullptr; }));
  // The handler answered: its body reads no more (it used to wait for ever here).
  char buf[16];
  EXPECT_EQ(kept->body->Read(buf, sizeof buf), -1);
  client.Close();
  server_.reset();
  EXPECT_EQ(kept->body->Read(buf, sizeof buf), -1);
  kept->body.reset();  // releases what it held of the connection's strand
}

TEST_F(OutlivedTest, AStreamsSinkKeptPastTheServerFailsAndReleasesCleanly) {
  auto stream = std::make_shared<RecordingStream>();
  Serve([stream](const HttpRequest&) {
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.stream = stream;
    return response;
  });
  Client client(port());
  client.Send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
  auto sink = stream->WaitStarted();
  ASSERT_TRUE(sink);
  EXPECT_NE(client.ReadUntil("data: hello\n\n"), "");
  server_.reset();
  EXPECT_EQ(stream->WaitStopped(), 1);
  EXPECT_TRUE(sink->Closed());
  EXPECT_FALSE(sink->Send("data: late\n\n"));
  EXPECT_FALSE(sink->WaitForRoom(0));
  sink->Close();
  sink.reset();
}

TEST_F(OutlivedTest, ADeferredReplyKeptPastTheServerAnswersNowhere) {
  auto kept = std::make_shared<Kept>();
  Serve([kept](const HttpRequest&) {
    HttpResponse response;
    response.deferred = std::make_shared<KeepReply>(kept);
    return response;
  });
  Client client(port());
  client.Send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(kept->WaitFor([&] { return kept->reply != nullptr; }));
  server_.reset();
  EXPECT_TRUE(client.ReadsEof());
  HttpResponse late;
  late.body = "after the server";
  kept->reply(std::move(late));  // goes nowhere
  kept->reply = nullptr;         // releases the reply's slot
}

}  // namespace
}  // namespace adapt::api
