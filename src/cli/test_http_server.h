// A one-request HTTP server for tests: it listens on 127.0.0.1 at an ephemeral port, records
// the first request it receives, answers it with a canned response and closes.
#pragma once

#include <map>
#include <string>
#include <thread>

namespace adapt::cli::testing {

struct RecordedRequest {
  std::string method;
  std::string target;                          // path and query, as sent
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// A complete HTTP/1.1 response with Content-Length and "Connection: close".
std::string CannedResponse(int status, const std::string& body,
                           const std::string& content_type = "application/json");

// Not thread-safe; owned by one test. The destructor stops a server that got no request.
class TestHttpServer {
 public:
  explicit TestHttpServer(std::string raw_response);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  // "http://127.0.0.1:<port>"
  std::string url() const;

  // Waits until the request has been answered, then returns it. Call at most once.
  RecordedRequest TakeRequest();

 private:
  void Serve();

  int listen_fd_ = -1;
  int port_ = 0;
  std::string raw_response_;
  RecordedRequest request_;
  std::thread thread_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then released).
int UnusedPort();

}  // namespace adapt::cli::testing
