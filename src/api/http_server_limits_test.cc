// The server's bounds on connections: caps, the head's deadline, the idle timeout between
// requests, and the minimum upload rate.
#include <gtest/gtest.h>

#include <chrono>
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

}  // namespace
}  // namespace adapt::api
