// The server's bounds on connections: caps (and the eviction of connections waiting for a head
// when the listener is full), the head's deadline, the idle timeout between requests, and the
// minimum upload rate.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "api/http_server_test_support.h"

namespace adapt::api {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

HttpResponse EchoWithLength(const HttpRequest& request) {
  HttpResponse response;
  response.body = request.method + " " + request.path + " " + std::to_string(request.body.size());
  return response;
}

HttpServerOptions LimitedOptions() {
  HttpServerOptions options;
  options.header_timeout = 1s;
  options.idle_timeout = 2s;
  options.limits = {4, 2};
  options.upload_rate = {1000, 1s, 2s};
  return options;
}

bool Served(uint16_t port) {
  Client client(port);
  client.Send("GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto response = client.ReadResponse();
  return response && response->status == 200;
}

TEST_F(HttpServerTest, AConnectionBeyondThePerClientCapIsClosedAtOnce) {
  Serve(EchoWithLength, LimitedOptions());
  Client first(port()), second(port());
  std::this_thread::sleep_for(200ms);  // accepted by the server, not only by the kernel
  Client third(port());
  auto start = Clock::now();
  EXPECT_TRUE(third.ReadsEof());
  EXPECT_LT(Clock::now() - start, 900ms);  // before the header timeout
  first.Close();
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(Served(port()));  // the slot came back
}

TEST_F(HttpServerTest, ASilentConnectionIsClosedAtTheHeaderTimeoutNotTheIdleOne) {
  Serve(EchoWithLength, LimitedOptions());
  Client client(port());
  auto start = Clock::now();
  EXPECT_TRUE(client.ReadsEof());
  EXPECT_GT(Clock::now() - start, 800ms);
  EXPECT_LT(Clock::now() - start, 1900ms);
}

TEST_F(HttpServerTest, ATrickledHeadIsCutAtTheHeaderTimeout) {
  Serve(EchoWithLength, LimitedOptions());
  Client client(port());
  auto start = Clock::now();
  client.Send("GET /slow HTTP/1.1\r\n");
  bool sent = true;
  for (int i = 0; i < 30 && sent && Clock::now() - start < 3s; ++i) {
    std::this_thread::sleep_for(100ms);
    sent = client.Send("X-Pad: y\r\n");
  }
  EXPECT_TRUE(!sent || client.ReadsEof());
  EXPECT_LT(Clock::now() - start, 2500ms);
}

TEST_F(HttpServerTest, AKeptAliveConnectionWaitsTheIdleTimeoutForItsNextRequest) {
  Serve(EchoWithLength, LimitedOptions());
  Client client(port());
  client.Send("GET /one HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadResponse());
  std::this_thread::sleep_for(1500ms);  // past the header timeout, within the idle one
  client.Send("GET /two HTTP/1.1\r\nHost: x\r\n\r\n");
  auto second = client.ReadResponse();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "GET /two 0");
  auto start = Clock::now();
  EXPECT_TRUE(client.ReadsEof());
  EXPECT_GT(Clock::now() - start, 1500ms);
}

TEST_F(HttpServerTest, ATrickledBodyIsAnswered408) {
  Serve(EchoWithLength, LimitedOptions());
  Client client(port());
  client.Send("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
  auto start = Clock::now();
  for (int i = 0; i < 20 && Clock::now() - start < 3s; ++i) {
    if (!client.Send("x")) break;
    std::this_thread::sleep_for(100ms);
  }
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  EXPECT_NE(response->body.find("request_timeout"), std::string::npos) << response->body;
  EXPECT_NE(response->body.find("1000 bytes/s"), std::string::npos) << response->body;
}

TEST_F(HttpServerTest, ABodyAboveTheMinimumRatePasses) {
  Serve(EchoWithLength, LimitedOptions());
  Client client(port());
  client.Send("POST /steady HTTP/1.1\r\nHost: x\r\nContent-Length: 6000\r\n\r\n");
  for (int i = 0; i < 20; ++i) {  // 300 bytes every 0.1 s: 3000 bytes/s for 2 s
    client.Send(std::string(300, 'y'));
    std::this_thread::sleep_for(100ms);
  }
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "POST /steady 6000");
}

// Serves /stream as an event stream that stays open (each with its own RecordingStream) and
// anything else as EchoWithLength.
class EvictionTest : public HttpServerTest {
 protected:
  void ServeWithStreams(ConnectionLimits limits) {
    HttpServerOptions options;
    options.limits = limits;
    Serve(
        [this](const HttpRequest& request) {
          if (request.path != "/stream") return EchoWithLength(request);
          auto stream = std::make_shared<RecordingStream>();
          {
            std::lock_guard lock(mu_);
            streams_.push_back(stream);
          }
          HttpResponse response;
          response.content_type = "text/event-stream";
          response.stream = stream;
          return response;
        },
        options);
  }

  // A client whose stream has begun: its connection is busy from now on.
  std::unique_ptr<Client> OpenStream(const char* source) {
    auto client = std::make_unique<Client>(port(), source);
    client->Send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    auto head = client->ReadHead();
    EXPECT_TRUE(head && head->status == 200);
    EXPECT_EQ(client->ReadUntil("\n\n"), "data: hello\n\n");
    return client;
  }

  // Answered by then, its connection is accepted, and idle again between requests.
  std::unique_ptr<Client> KeptAlive(const char* source) {
    auto client = std::make_unique<Client>(port(), source);
    client->Send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n");
    auto response = client->ReadResponse();
    EXPECT_TRUE(response && response->status == 200);
    return client;
  }

  std::shared_ptr<RecordingStream> stream(size_t i) {
    std::lock_guard lock(mu_);
    return i < streams_.size() ? streams_[i] : nullptr;
  }

  // How many of `clients` the server has closed, once at least one has (or after 5 s).
  static int ClosedAmong(const std::vector<std::unique_ptr<Client>>& clients) {
    int closed = 0;
    for (int i = 0; i < 500 && closed == 0; ++i) {
      if (i) std::this_thread::sleep_for(10ms);
      closed = 0;
      for (const auto& c : clients) closed += c->ClosedNow() ? 1 : 0;
    }
    return closed;
  }

  std::mutex mu_;
  std::vector<std::shared_ptr<RecordingStream>> streams_;
};

TEST_F(EvictionTest, AFullListenerClosesAConnectionWaitingForAHeadToServeANewClient) {
  ServeWithStreams({8, 4});
  auto streaming = OpenStream("127.0.0.2");  // the oldest connection, but busy
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(std::make_unique<Client>(port(), "127.0.0.2"));
  for (int i = 0; i < 3; ++i) idle.push_back(std::make_unique<Client>(port(), "127.0.0.3"));
  // Accepted after those (the acceptor takes connections in order): all eight are in.
  idle.push_back(KeptAlive("127.0.0.3"));

  Client newcomer(port(), "127.0.0.4");
  ASSERT_TRUE(newcomer.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto answer = newcomer.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->body, "GET /hello 0");

  EXPECT_EQ(ClosedAmong(idle), 1);
  EXPECT_TRUE(idle.front()->ClosedNow());  // the one waiting longest
  auto sink = stream(0);
  ASSERT_TRUE(sink);
  ASSERT_TRUE(sink->WaitStarted()->Send("data: still here\n\n"));
  EXPECT_EQ(streaming->ReadUntil("\n\n"), "data: still here\n\n");

  // An address at its own cap is still refused, and pushes nobody out.
  Client fifth(port(), "127.0.0.3");
  EXPECT_TRUE(fifth.ReadsEof());
  int closed = 0;
  for (const auto& c : idle) closed += c->ClosedNow() ? 1 : 0;
  EXPECT_EQ(closed, 1);
}

TEST_F(EvictionTest, AKeptAliveConnectionBetweenRequestsIsEvictedAfterANewSilentOne) {
  ServeWithStreams({2, 0});
  Client silent(port(), "127.0.0.2");
  auto kept = KeptAlive("127.0.0.3");  // idle since its answer: after `silent`
  Client newcomer(port(), "127.0.0.4");
  ASSERT_TRUE(newcomer.Send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  auto answer = newcomer.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_TRUE(silent.ReadsEof());
  // The kept-alive one still serves its client.
  ASSERT_TRUE(kept->Send("GET /second HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto second = kept->ReadResponse();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "GET /second 0");
}

TEST_F(EvictionTest, WhenNoConnectionWaitsForAHeadANewOneIsRefused) {
  ServeWithStreams({2, 0});
  auto one = OpenStream("127.0.0.2");
  auto two = OpenStream("127.0.0.3");
  Client refused(port(), "127.0.0.4");
  EXPECT_TRUE(refused.ReadsEof());
  ASSERT_TRUE(stream(1));
  ASSERT_TRUE(stream(1)->WaitStarted()->Send("data: two\n\n"));
  EXPECT_EQ(two->ReadUntil("\n\n"), "data: two\n\n");
  ASSERT_TRUE(stream(0)->WaitStarted()->Send("data: one\n\n"));
  EXPECT_EQ(one->ReadUntil("\n\n"), "data: one\n\n");
}

}  // namespace
}  // namespace adapt::api
