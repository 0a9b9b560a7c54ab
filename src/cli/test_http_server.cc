#include "cli/test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace adapt::cli::testing {
namespace {

int BindLoopback(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("bind failed");
  }
  port = ntohs(address.sin_port);
  return fd;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

RecordedRequest ParseRequest(const std::string& head) {
  RecordedRequest request;
  size_t line_end = head.find("\r\n");
  std::string request_line = head.substr(0, line_end);
  size_t first_space = request_line.find(' ');
  size_t second_space = request_line.find(' ', first_space + 1);
  request.method = request_line.substr(0, first_space);
  request.target = request_line.substr(first_space + 1, second_space - first_space - 1);
  while (line_end != std::string::npos && line_end + 2 < head.size()) {
    size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    std::string line = head.substr(start, line_end - start);
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t value_start = line.find_first_not_of(' ', colon + 1);
    request.headers[Lower(line.substr(0, colon))] =
        value_start == std::string::npos ? "" : line.substr(value_start);
  }
  return request;
}

}  // namespace

std::string CannedResponse(int status, const std::string& body, const std::string& content_type) {
  std::string response = "HTTP/1.1 " + std::to_string(status) + " Canned\r\n";
  if (!body.empty()) response += "Content-Type: " + content_type + "\r\n";
  response += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return response + "Connection: close\r\n\r\n" + body;
}

std::string OpenEventStream(const std::string& first_events) {
  // No Content-Length: the body lasts until the connection closes.
  return "HTTP/1.1 200 Canned\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" +
         first_events;
}

TestHttpServer::TestHttpServer(std::string raw_response)
    : TestHttpServer(std::vector<CannedExchange>{{std::move(raw_response), false}}) {}

TestHttpServer::TestHttpServer(std::vector<CannedExchange> exchanges)
    : exchanges_(std::move(exchanges)) {
  listen_fd_ = BindLoopback(port_);
  if (::listen(listen_fd_, 8) != 0) throw std::runtime_error("listen failed");
  thread_ = std::thread([this] { Serve(); });
}

TestHttpServer::~TestHttpServer() {
  // Wakes a Serve() still blocked in accept() when the test made fewer requests.
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
}

std::string TestHttpServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

RecordedRequest TestHttpServer::TakeRequest() {
  std::vector<RecordedRequest> requests = TakeRequests();
  return requests.empty() ? RecordedRequest{} : requests.front();
}

std::vector<RecordedRequest> TestHttpServer::TakeRequests() {
  if (thread_.joinable()) thread_.join();
  return requests_;
}

void TestHttpServer::Serve() {
  for (const CannedExchange& exchange : exchanges_) {
    if (!ServeOne(exchange)) return;
  }
}

bool TestHttpServer::ServeOne(const CannedExchange& exchange) {
  int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return false;
  RecordedRequest request;
  std::string data;
  char buffer[4096];
  size_t head_end = std::string::npos;
  size_t wanted = 0;
  for (;;) {
    if (head_end != std::string::npos && data.size() >= head_end + 4 + wanted) break;
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    data.append(buffer, static_cast<size_t>(n));
    if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
      request = ParseRequest(data.substr(0, head_end + 2));
      auto length = request.headers.find("content-length");
      wanted = length == request.headers.end() ? 0 : std::stoul(length->second);
    }
  }
  if (head_end != std::string::npos) request.body = data.substr(head_end + 4, wanted);
  requests_.push_back(std::move(request));
  const std::string& raw = exchange.raw_response;
  size_t sent = 0;
  while (sent < raw.size()) {
    ssize_t n = ::write(fd, raw.data() + sent, raw.size() - sent);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  if (exchange.hold_open) {
    // Until the client hangs up (read() answers 0), or 30 s at most if it never does.
    timeval limit{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    while (::read(fd, buffer, sizeof(buffer)) > 0) {
    }
  }
  ::close(fd);
  return true;
}

int UnusedPort() {
  int port = 0;
  ::close(BindLoopback(port));
  return port;
}

}  // namespace adapt::cli::testing
