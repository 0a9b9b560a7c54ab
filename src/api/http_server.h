// An asynchronous HTTP/1.1 server: Beast I/O threads parse and write, a worker pool runs
// the handler, so a handler may block without stalling other connections.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/http_types.h"
#include "api/upload_rate.h"
#include "base/connection_limiter.h"
#include "base/status.h"

namespace adapt::api {

struct HttpServerOptions {
  std::string host = "127.0.0.1";   // address or name to listen on
  uint16_t port = 8080;             // 0 picks a free port; see HttpServer::port()
  int io_threads = 2;               // threads doing socket I/O (at least 1 is used)
  size_t max_body_bytes = 1 << 20;  // larger request bodies get 413 before being read
  std::string name = "API";         // names the listener in the log
  // Connections beyond these (in all, or from one client address) are closed as accepted;
  // past the total, a connection waiting for a request head is closed instead when there is
  // one (the one waiting longest).
  ConnectionLimits limits;
  // A request head must arrive in full within header_timeout of the connection's start, or
  // of its first byte on a kept-alive connection, which waits idle_timeout for that byte.
  // A response that the client does not read for idle_timeout is abandoned.
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds idle_timeout{60};
  // Request bodies slower than this are cut with a 408 (streamed ones too).
  UploadRateLimits upload_rate;
  // Requests for which this returns true (given the method and the raw path, without the
  // query) reach the handler as soon as their header is read, with HttpRequest::body_stream
  // to read a body of any size; max_body_bytes does not apply to them.
  std::function<bool(std::string_view method, std::string_view path)> stream_request_body;
  // The 413 for a body over max_body_bytes to `path`, where clients parse another shape than
  // the API's JSON error (/mcp answers JSON-RPC); unset, or nullopt: the API's error.
  std::function<std::optional<HttpResponse>(std::string_view path, size_t max_body_bytes)>
      oversized_body;
};

// Every connection is served on its own strand: one request at a time, keep-alive and
// pipelining supported. Errors the server answers itself (400 malformed, 408 body too slow,
// 413 body too large, 431 header over 64 KiB, 500 handler threw) use the API's JSON error
// shape (a 413 the options' oversized_body answers excepted). A head that misses its deadline, a
// connection over the limits, or one waiting for a head that a new connection pushes out of a
// full listener, is closed without an answer.
//
// Thread-safety: Listen, Start, Stop and port may be called from any thread except the server's
// own I/O threads and `workers` threads (Stop waits for both).
class HttpServer {
 public:
  // `workers` runs the handler and must keep running until Stop returns.
  HttpServer(HttpServerOptions opts, HttpHandler handler, boost::asio::thread_pool& workers);
  ~HttpServer();  // Stops.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens without accepting: the address is held (and port() known) from
  // now on, and connections wait in the backlog until Start. The error names the address
  // ("listening on 127.0.0.1:8080: Address already in use"). Optional: Start listens itself.
  Status Listen();

  // Listens unless Listen did, and starts accepting on the I/O threads. On failure nothing
  // runs and the error names the address.
  Status Start();

  // The bound port, useful with port 0; 0 before Listen or Start.
  uint16_t port() const;

  // Closes the listener and every connection, open streams included (their Stop is
  // called), waits for running handlers to return and joins the I/O threads. Idempotent.
  // Start may be called again afterwards.
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adapt::api
