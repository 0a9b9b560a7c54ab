// One HTTP/1.1 connection (read, hand to a worker, write; keep-alive, pipelining and
// streamed responses) and the state every connection shares with its HttpServer.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "api/http_server.h"
#include "api/http_types.h"

namespace adapt::api {

class HttpConnection;  // Defined in http_connection_internal.h.

// What every connection shares with the server. The server owns it and must keep it
// alive until `ioc` has stopped running: connections hold a reference to it.
struct ServerContext {
  ServerContext(HttpServerOptions opts, HttpHandler fn, boost::asio::thread_pool& pool)
      : options(std::move(opts)),
        handler(std::move(fn)),
        workers(pool),
        limiter(options.name, options.limits),
        ioc(std::max(1, options.io_threads)) {}

  // Runs the handler; an exception is logged and becomes a 500. Thread-safe.
  HttpResponse Invoke(const HttpRequest& request) const;

  // Thread-safe, like CloseConnections. False once the server is stopping: the caller
  // drops the connection.
  bool Register(const std::shared_ptr<HttpConnection>& connection);
  void Unregister(HttpConnection* connection);

  // Sets `stopping` and asks every live connection to close; they finish on the I/O
  // threads. New connections are refused until `stopping` is cleared.
  void CloseConnections();

  const HttpServerOptions options;
  const HttpHandler handler;
  boost::asio::thread_pool& workers;
  ConnectionLimiter limiter;  // thread-safe
  std::mutex mu;
  std::atomic<bool> stopping{false};  // written under mu
  std::unordered_map<HttpConnection*, std::weak_ptr<HttpConnection>> connections;  // guarded by mu
  // Declared last so it goes first: destroying it may destroy connections, which unregister.
  boost::asio::io_context ioc;
};

// Serves a freshly accepted `socket` until the client leaves or CloseConnections is
// called; dropped at once when the server is already stopping, or when the listener or the
// client is at its connection limit (server.limiter). A connection waiting for a request
// head (its first, or the next on a kept-alive connection) may be closed by the limiter to
// make room for a new one. The socket's executor must be a strand of `server.ioc`: the
// connection runs all its work on it.
void ServeConnection(ServerContext& server, boost::asio::ip::tcp::socket socket);

}  // namespace adapt::api
