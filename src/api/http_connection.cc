#include "api/http_connection.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <limits>
#include <vector>

#include "api/http_connection_internal.h"
#include "api/http_request_decoding.h"
#include "api/http_response_fields.h"
#include "base/background_work.h"
#include "base/log.h"

namespace adapt::api {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// Before closing after an error response, unread request bytes are drained for a while:
// closing with unread data makes the kernel send a reset that can destroy the response.
constexpr auto kLingerTimeout = std::chrono::seconds(2);
// What a kept-alive connection reads while it waits for the next request's first byte.
constexpr size_t kFirstRead = 4096;

}  // namespace

HttpConnection::HttpConnection(ServerContext& server, tcp::socket socket, std::string remote,
                               ConnectionLimiter::Slot slot)
    : server_(server),
      stream_(std::move(socket)),
      strand_(stream_.get_executor()),
      remote_(std::move(remote)),
      slot_(std::move(slot)),
      body_timer_(strand_),
      deferred_timer_(strand_) {}

HttpConnection::~HttpConnection() {
  if (reply_slot_) reply_slot_->Close();
  if (sink_) sink_->MarkClosed();
  if (body_stream_) body_stream_->Detach();
  // Only reached without EndStream when the io_context dropped our pending handlers.
  if (response_stream_) StopResponseStream();
  server_.Unregister(this);
}

void HttpConnection::Run() {
  // Runs on the accepting thread of a later connection: the close goes through the strand,
  // where a request that has begun meanwhile keeps the connection.
  slot_.OnEvict([weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    net::any_io_executor strand = self->strand_;
    net::post(strand, [self = std::move(self)] {
      if (self->slot_.evicted()) self->CloseNow();
    });
  });
  net::post(strand_, [self = shared_from_this()] { self->ReadHeader(); });
}

void HttpConnection::Close() {
  net::post(strand_, [self = shared_from_this()] { self->CloseNow(); });
}

void HttpConnection::ReadHeader() {
  // Until the head is complete, a full listener may close this connection for a new one.
  slot_.MarkIdle();
  version_ = 11;
  head_ = false;
  keep_alive_ = false;
  parser_.emplace();
  parser_->header_limit(kMaxHeaderBytes);
  // No limit while the header is read (Beast would check Content-Length against it
  // there): a streamed route has none; the others get theirs in OnHeader. Not boost::none:
  // this Beast compares Content-Length > none as true.
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  if (!kept_alive_ || buffer_.size() > 0) return ReadHead();
  // Between requests: idle_timeout for the next one to start, then header_timeout for it.
  stream_.expires_after(server_.options.idle_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstRead),
                          [self = shared_from_this()](error_code ec, size_t n) {
                            if (ec) return self->CloseNow();
                            self->buffer_.commit(n);
                            self->ReadHead();
                          });
}

// The deadline covers the whole head: a client that trickles it a byte at a time is cut.
void HttpConnection::ReadHead() {
  stream_.expires_after(server_.options.header_timeout);
  http::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
}

void HttpConnection::OnHeader(error_code ec) {
  slot_.MarkBusy();
  if (ec) return OnReadError(ec);
  kept_alive_ = true;
  const auto& msg = parser_->get();
  version_ = msg.version() == 10 ? 10 : 11;
  std::string_view target(msg.target().data(), msg.target().size());
  path_ = std::string(target.substr(0, target.find('?')));
  head_ = msg.method() == http::verb::head;
  keep_alive_ = msg.keep_alive();
  // Beast frames a body by Transfer-Encoding only when chunked is its last coding, and reads
  // any other as no body at all, so the body would be parsed as the next request (a
  // request-smuggling desync behind a proxy). RFC 9112 6.3: refuse and close.
  // RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with two, is a 400: a proxy
  // in front and adaptd could otherwise read it as meant for different hosts.
  if (const size_t hosts = msg.count(http::field::host);
      hosts > 1 || (hosts == 0 && version_ == 11)) {
    keep_alive_ = false;
    return WriteError(400, "invalid_argument",
                      hosts ? "a request must not have two Host headers"
                            : "an HTTP/1.1 request must have a Host header");
  }
  if (msg.count(http::field::transfer_encoding) && !parser_->chunked()) {
    keep_alive_ = false;
    return WriteError(400, "invalid_argument",
                      "Transfer-Encoding must end with chunked (no other coding is accepted)");
  }
  if (StreamsBody(msg)) return DispatchStreaming();
  parser_->body_limit(server_.options.max_body_bytes);
  // The parser enforces body_limit too; checking here keeps the rule visible.
  auto length = parser_->content_length();
  if (length && *length > server_.options.max_body_bytes) return PayloadTooLarge();
  if (parser_->is_done()) return Dispatch();
  if (version_ == 11 && beast::iequals(msg[http::field::expect], "100-continue")) {
    stream_.expires_after(server_.options.idle_timeout);
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](error_code ec, size_t) {
                       if (ec) return self->CloseNow();
                       self->ReadBody();
                     });
    return;
  }
  ReadBody();
}

void HttpConnection::OnReadError(error_code ec) {
  static const auto& http_category = http::make_error_code(http::error::bad_target).category();
  if (ec == http::error::body_limit) return PayloadTooLarge();
  if (ec == http::error::header_limit) {
    return WriteError(431, "invalid_argument",
                      "request header exceeds " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (ec == http::error::buffer_overflow) {
    return WriteError(431, "invalid_argument",
                      "a chunk's size line or the trailer section exceeds " +
                          std::to_string(kMaxBufferedBytes - kStreamedBodyRead) + " bytes");
  }
  // The client left, timed out, or the server is stopping: nobody to answer.
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec.category() != http_category) {
    return CloseNow();
  }
  WriteError(400, "invalid_argument", "malformed HTTP request");
}

void HttpConnection::PayloadTooLarge() {
  if (server_.options.oversized_body) {
    if (auto answer = server_.options.oversized_body(path_, server_.options.max_body_bytes)) {
      keep_alive_ = false;
      return WriteResponse(std::move(*answer), false);
    }
  }
  WriteError(413, "payload_too_large",
             "request body exceeds " + std::to_string(server_.options.max_body_bytes) + " bytes");
}

void HttpConnection::Dispatch() {
  auto request = ToHttpRequest(parser_->release(), remote_);
  parser_.reset();
  if (!request) return WriteError(400, "invalid_argument", "malformed HTTP request");
  RunHandler(std::move(*request));
}

void HttpConnection::RunHandler(HttpRequest request) {
  // Counts as io_context work, so Stop's join waits for the handler and its reply
  // instead of leaving a worker to post into a destroyed io_context.
  auto guard = net::make_work_guard(server_.ioc);
  // Invoke answers a handler's exception with a 500; the guard is for what surrounds it.
  net::post(server_.workers,
            Guarded("http request", [self = shared_from_this(), request = std::move(request),
                                     guard = std::move(guard)]() mutable {
              HttpResponse response = self->server_.Invoke(request);
              request = HttpRequest();  // a streamed body in it holds the strand too
              {
                // What holds the strand goes before the guard: once the guard is gone, Stop may
                // destroy the io_context and its strand service, and a strand released after that
                // is a use after free (ASan saw one when a test stopped its server right after a
                // reply).
                net::any_io_executor strand = self->strand_;
                // Moving self in matters: the connection must not be released on the worker thread.
                net::post(strand,
                          [self = std::move(self), response = std::move(response)]() mutable {
                            self->OnHandled(std::move(response));
                          });
              }
              guard.reset();
            }));
}

void HttpConnection::OnHandled(HttpResponse response) {
  if (body_parser_) {
    // A body the handler left unread is drained by LingerClose; the connection cannot be
    // reused after it.
    if (!body_parser_->is_done()) keep_alive_ = false;
    body_parser_.reset();
    if (body_stream_) body_stream_->Detach();  // the handler may keep it: it reads no more
    body_stream_.reset();
    buffer_.shrink_to_fit();  // a streamed body's reads made it large; keeps what is unread
  }
  if (closed_) return;
  if (streamed_body_too_slow_) {
    // Whatever the handler made of the cut body, the client learns why.
    spdlog::info("http: {}: {}", remote_, upload_->Why());
    streamed_body_too_slow_ = false;
    keep_alive_ = false;
    response = ServerErrorResponse(408, "request_timeout", upload_->Why());
  }
  if (response.status < 200 || response.status > 599) {
    spdlog::error("http handler returned invalid status {}; answering 500", response.status);
    response = ServerErrorResponse(500, "internal", "internal error");
  }
  if (response.deferred) return AwaitDeferred(std::move(response.deferred));
  if (response.stream) return WriteStreamHeader(std::move(response));
  WriteResponse(std::move(response), keep_alive_ && !server_.stopping);
}

void HttpConnection::WriteError(int status, const std::string& code, const std::string& message) {
  keep_alive_ = false;
  WriteResponse(ServerErrorResponse(status, code, message), false);
}

void HttpConnection::WriteResponse(HttpResponse response, bool keep_alive) {
  auto msg = std::make_shared<http::response<http::string_body>>();
  msg->version(version_);
  msg->result(static_cast<unsigned>(response.status));
  msg->set(http::field::server, "adaptd");
  // RFC 9110: 204 and 304 carry neither a body nor a Content-Length.
  const bool bodyless = response.status == 204 || response.status == 304;
  if (!bodyless) SetContentType(*msg, response.content_type);
  AddHandlerHeaders(*msg, response.headers);
  if (!bodyless) {
    msg->content_length(response.body.size());
    if (!head_) msg->body() = std::move(response.body);
  }
  msg->keep_alive(keep_alive);
  stream_.expires_after(server_.options.idle_timeout);
  http::async_write(stream_, *msg,
                    [self = shared_from_this(), msg, keep_alive](error_code ec, size_t) {
                      if (ec) return self->CloseNow();
                      if (!keep_alive) return self->LingerClose();
                      self->ReadHeader();
                    });
}

void HttpConnection::LingerClose() {
  // Its answer is written; what is left only protects it from a reset, not worth a slot
  // another client waits for.
  slot_.MarkIdle();
  error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(kLingerTimeout);
  Drain();
}

void HttpConnection::Drain() {
  stream_.async_read_some(net::buffer(discard_),
                          [self = shared_from_this()](error_code ec, size_t) {
                            if (ec) return self->CloseNow();
                            self->Drain();
                          });
}

void HttpConnection::CloseNow() {
  closed_ = true;
  CancelDeferred();
  body_timer_.cancel();  // it holds the connection
  if (streaming_) return EndStream();
  stream_.close();
}

HttpResponse ServerContext::Invoke(const HttpRequest& request) const {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    spdlog::error("http handler for {} {} threw: {}", request.method, Quote(request.path),
                  e.what());
  } catch (...) {
    spdlog::error("http handler for {} {} threw a non-standard exception", request.method,
                  Quote(request.path));
  }
  return ServerErrorResponse(500, "internal", "internal error");
}

bool ServerContext::Register(const std::shared_ptr<HttpConnection>& connection) {
  std::lock_guard lock(mu);
  if (stopping) return false;
  connections.emplace(connection.get(), connection);
  return true;
}

void ServerContext::Unregister(HttpConnection* connection) {
  std::lock_guard lock(mu);
  connections.erase(connection);
}

void ServerContext::CloseConnections() {
  std::vector<std::shared_ptr<HttpConnection>> live;
  {
    std::lock_guard lock(mu);
    stopping = true;
    for (auto& [ptr, weak] : connections) {
      if (auto connection = weak.lock()) live.push_back(std::move(connection));
    }
  }
  for (auto& connection : live) connection->Close();
}

void ServeConnection(ServerContext& server, tcp::socket socket) {
  error_code remote_ec;
  auto remote = socket.remote_endpoint(remote_ec);
  std::string address = remote_ec ? std::string() : remote.address().to_string();
  auto slot = server.limiter.Admit(address);
  if (!slot) {
    error_code ignored;
    socket.close(ignored);
    return;
  }
  auto connection =
      std::make_shared<HttpConnection>(server, std::move(socket), address, std::move(*slot));
  if (server.Register(connection)) connection->Run();
}

}  // namespace adapt::api
