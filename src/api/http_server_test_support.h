// Test support for the HTTP server tests: a raw socket client that sees exactly what the
// server sends, a recording response stream, and a fixture serving one handler on a free
// loopback port. Included by each http_server_*_test.cc (anonymous namespace: one copy each).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
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

#include "api/http_server.h"

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
  // `source`: the loopback address to connect from (all of 127.0.0.0/8 is loopback), so
  // that a test can be several clients; default 127.0.0.1.
  explicit Client(uint16_t port, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    if (source) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      ::inet_pton(AF_INET, source, &local.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return;
    }
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

  // Waits until the server's kernel has acknowledged every byte sent, so that they wait in
  // the server's socket; false if that takes more than about 5 s.
  bool WaitUntilReceived() {
    for (int i = 0; i < 5000; ++i) {
      int unacknowledged = 0;
      if (::ioctl(fd_, SIOCOUTQ, &unacknowledged) != 0) return false;
      if (unacknowledged == 0) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
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

  // True when the server has closed the connection (nothing read is lost: it peeks).
  bool ClosedNow() {
    if (!buffer_.empty()) return false;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
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

[[maybe_unused]] HttpResponse Echo(const HttpRequest& request) {
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
}  // namespace
}  // namespace adapt::api
