// A scripted HTTP server for tests: it listens on 127.0.0.1 at an ephemeral port and answers
// one request per connection with the next canned response, recording each request, until
// its script is done.
#pragma once

#include <map>
#include <string>
#include <thread>
#include <vector>

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

// The head and first bytes of an event stream that stays open: with `hold_open`, the server
// sends it and then keeps the connection until the client closes it (a stream that is silent
// from then on, as one waiting for an event that does not come).
std::string OpenEventStream(const std::string& first_events);

struct CannedExchange {
  std::string raw_response;
  bool hold_open = false;
};

// Not thread-safe; owned by one test. The destructor stops a server still waiting.
class TestHttpServer {
 public:
  explicit TestHttpServer(std::string raw_response);
  // Answers the i-th connection with exchanges[i].
  explicit TestHttpServer(std::vector<CannedExchange> exchanges);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  // "http://127.0.0.1:<port>"
  std::string url() const;

  // Waits until the script is done (or the destructor's turn), then returns the first
  // request. Call at most once, and not with TakeRequests.
  RecordedRequest TakeRequest();
  // Waits until every exchange has been answered, then returns the requests in order.
  std::vector<RecordedRequest> TakeRequests();

 private:
  void Serve();
  bool ServeOne(const CannedExchange& exchange);

  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<CannedExchange> exchanges_;
  std::vector<RecordedRequest> requests_;
  std::thread thread_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then released).
int UnusedPort();

}  // namespace adapt::cli::testing
