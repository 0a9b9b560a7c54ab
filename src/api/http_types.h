// The HTTP request and response as handlers see them: plain values, no Beast types,
// so API handlers can be written and tested without a socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace adapt::api {

// The body of a request whose route streams it (HttpServerOptions::stream_request_body):
// read by the handler while the client is still sending, so memory stays flat whatever
// its size. Used from the handler's thread only.
class RequestBody {
 public:
  virtual ~RequestBody() = default;
  // Blocks until up to `n` bytes arrived; returns how many, 0 at the end of the body, or -1
  // when the client left, stalled past the idle timeout, or sent a malformed body.
  virtual long Read(char* buf, size_t n) = 0;
};

struct HttpRequest {
  std::string method;                          // "GET", as sent (case preserved)
  std::string path;                            // percent-decoded path without the query
  std::string target;                          // the request-target exactly as sent (SigV4)
  std::map<std::string, std::string> query;    // percent-decoded ('+' is a space); first wins
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::string body;                            // empty when body_stream is set
  std::shared_ptr<RequestBody> body_stream;    // set for routes that stream their body
  std::string remote;                          // peer IP address, without the port

  // The value of header `lower_name`, "" when absent.
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Where a streaming response writes. Thread-safe; the server keeps only a weak link to
// the connection, so a sink may outlive it (Send then returns false).
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Queues `data` for the client, written in the order of Send calls. Never blocks.
  // Returns false once the client is gone, the stream was closed, or the client reads so
  // slowly that too much is queued (the connection is then dropped).
  virtual bool Send(std::string data) = 0;
  virtual bool Closed() const = 0;
  // Ends the response after what is already queued has been written.
  virtual void Close() = 0;
  // Blocks until at most `max_queued` bytes wait to be written, so that a producer can move
  // any amount through a slow client with bounded memory. False once the stream is closed.
  virtual bool WaitForRoom(size_t max_queued) = 0;
};

// A streaming response (Server-Sent Events, file downloads). Start and Stop run on an I/O thread
// and must not block.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Called once after the response header was written. Keep `sink` and push to it from
  // any thread. Not called when the client left before the header was written.
  virtual void Start(std::shared_ptr<StreamSink> sink) = 0;
  // Called exactly once after Start, when the connection ends for any reason: the client
  // disconnected, a write failed, the sink was closed, or the server stopped.
  virtual void Stop() = 0;
};

struct HttpResponse;

// An answer that comes later, so that a request that waits (for a command's end, up to its
// waitSeconds) holds no worker thread meanwhile: the handler returns at once, the connection
// keeps the request open, and writes the answer when Start's `reply` is called. Nothing is
// read from the connection meanwhile, so a client that leaves is noticed at the answer.
class DeferredResponse {
 public:
  using Reply = std::function<void(HttpResponse)>;
  virtual ~DeferredResponse() = default;
  // When Expire is called if no answer came before.
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  // Called once, on an I/O thread; must not block. Call `reply` once, from any thread, with
  // the answer; calls after the first, or after Cancel, do nothing.
  virtual void Start(Reply reply) = 0;
  // Called at most once, on an I/O thread, when the deadline passed without an answer; must
  // not block, and must lead to a reply soon (work that blocks goes to a pool).
  virtual void Expire() = 0;
  // Called at most once, on an I/O thread, when the connection ends before the answer
  // (server stopping); must not block. Stops whatever would call `reply`.
  virtual void Cancel() = 0;
};

struct HttpResponse {
  int status = 200;                               // 200..599; anything else is answered 500
  std::string content_type = "application/json";  // omitted when empty
  // Extra headers. Content-Length, Transfer-Encoding and Connection are the server's and
  // are dropped, as is any header with CR, LF or NUL in it.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, `body` is ignored: the header goes out without Content-Length and with
  // Connection: close, then the stream writes the body until the connection ends.
  std::shared_ptr<ResponseStream> stream;
  // With `stream`: the body's exact length, sent as Content-Length, when known.
  std::optional<uint64_t> stream_length;
  // When set, everything else is ignored: the answer is the one `deferred` gives later.
  std::shared_ptr<DeferredResponse> deferred;
};

// Runs on a worker thread, concurrently with other calls; may block. An exception becomes
// a 500 response.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

}  // namespace adapt::api
