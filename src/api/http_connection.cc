#include "api/http_connection.h"

#include <array>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "api/http_request_decoding.h"
#include "api/http_response_fields.h"
#include "base/log.h"

namespace adapt::api {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

constexpr uint32_t kMaxHeaderBytes = 64 * 1024;
// A client that stops reading a stream must not make the server buffer without bound.
constexpr size_t kMaxQueuedStreamBytes = 8 << 20;
// Before closing after an error response, unread request bytes are drained for a while:
// closing with unread data makes the kernel send a reset that can destroy the response.
constexpr auto kLingerTimeout = std::chrono::seconds(2);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// What a kept-alive connection reads while it waits for the next request's first byte.
constexpr size_t kFirstRead = 4096;

// Stream code is not ours; an exception escaping into the io_context would skip cleanup.
template <typename Fn>
void RunLogged(std::string_view what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    spdlog::error("http: {} threw: {}", what, e.what());
  } catch (...) {
    spdlog::error("http: {} threw a non-standard exception", what);
  }
}

class ConnectionSink final : public StreamSink {
 public:
  ConnectionSink(std::weak_ptr<HttpConnection> connection, net::any_io_executor strand)
      : connection_(std::move(connection)), strand_(std::move(strand)) {}

  bool Send(std::string data) override;
  bool Closed() const override {
    std::lock_guard lock(mu_);
    return closed_;
  }
  void Close() override;
  bool WaitForRoom(size_t max_queued) override {
    std::unique_lock lock(mu_);
    room_.wait(lock, [&] { return closed_ || queued_bytes_ <= max_queued; });
    return !closed_;
  }

  // On the connection's strand.
  void MarkClosed() {
    std::lock_guard lock(mu_);
    closed_ = true;
    room_.notify_all();
  }
  void Written(size_t n) {
    std::lock_guard lock(mu_);
    queued_bytes_ -= n;
    room_.notify_all();
  }

 private:
  // Posts happen under mu_ and only while !closed_. The connection marks the sink closed
  // before it ends, and the io_context outlives every connection, so no post can reach a
  // destroyed io_context however long a caller keeps the sink.
  mutable std::mutex mu_;
  std::condition_variable room_;
  bool closed_ = false;
  size_t queued_bytes_ = 0;
  const std::weak_ptr<HttpConnection> connection_;
  const net::any_io_executor strand_;
};

// A streamed request body: Read, on the handler's worker thread, asks the connection's
// strand for the next bytes and waits for them, so the socket is read only as fast as the
// handler consumes (backpressure all the way to the client).
class StreamedBody final : public RequestBody {
 public:
  StreamedBody(std::weak_ptr<HttpConnection> connection, net::any_io_executor strand)
      : connection_(std::move(connection)), strand_(std::move(strand)) {}

  long Read(char* buf, size_t n) override;

  // On the connection's strand: the outcome of the read Read asked for.
  void Deliver(long result) {
    std::lock_guard lock(mu_);
    if (result <= 0) ended_ = true;
    result_ = result;
    ready_ = true;
    ready_cv_.notify_all();
  }

 private:
  const std::weak_ptr<HttpConnection> connection_;
  const net::any_io_executor strand_;
  std::mutex mu_;
  std::condition_variable ready_cv_;
  bool ready_ = false;
  bool ended_ = false;
  long result_ = 0;
};

// Where a DeferredResponse's answer goes: to the connection's strand, once, while the
// connection waits for it. Holds the connection until then. Thread-safe.
template <typename Connection>
class DeferredReplySlot {
 public:
  DeferredReplySlot(std::shared_ptr<Connection> connection, net::any_io_executor strand)
      : connection_(std::move(connection)), strand_(std::move(strand)) {}
  void Reply(HttpResponse response) {
    std::lock_guard lock(mu_);
    if (!connection_) return;
    net::post(strand_, [c = std::move(connection_), r = std::move(response)]() mutable {
      c->OnDeferredAnswer(std::move(r));
    });
  }
  // Posts happen only before Close, which the connection calls before it ends: none can
  // reach a destroyed io_context.
  void Close() {
    std::lock_guard lock(mu_);
    connection_.reset();
  }

 private:
  std::mutex mu_;
  std::shared_ptr<Connection> connection_;
  const net::any_io_executor strand_;
};

}  // namespace

// Every member function runs on the connection's strand.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
  using Clock = std::chrono::steady_clock;

 public:
  HttpConnection(ServerContext& server, tcp::socket socket, std::string remote,
                 ConnectionLimiter::Slot slot)
      : server_(server),
        stream_(std::move(socket)),
        strand_(stream_.get_executor()),
        remote_(std::move(remote)),
        slot_(std::move(slot)),
        body_timer_(strand_),
        deferred_timer_(strand_) {}

  ~HttpConnection() {
    if (reply_slot_) reply_slot_->Close();
    if (sink_) sink_->MarkClosed();
    // Only reached without EndStream when the io_context dropped our pending handlers.
    if (response_stream_) StopResponseStream();
    server_.Unregister(this);
  }

  void Run() {
    net::post(strand_, [self = shared_from_this()] { self->ReadHeader(); });
  }
  void Close() {
    net::post(strand_, [self = shared_from_this()] { self->CloseNow(); });
  }

  void QueueChunk(std::string data) {
    if (stream_ended_) return;
    outbox_.push_back(std::move(data));
    if (!writing_) WriteNextChunk();
  }
  void FinishStream() {
    if (stream_ended_) return;
    finish_when_drained_ = true;
    if (!writing_) EndStream();
  }
  void DropSlowConsumer() {
    spdlog::warn("http: closing stream to {}: client reads too slowly", remote_);
    EndStream();
  }

 private:
  void ReadHeader() {
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
  void ReadHead() {
    stream_.expires_after(server_.options.header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec) return OnReadError(ec);
    kept_alive_ = true;
    const auto& msg = parser_->get();
    version_ = msg.version() == 10 ? 10 : 11;
    head_ = msg.method() == http::verb::head;
    keep_alive_ = msg.keep_alive();
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

  void ReadBody() {
    upload_.emplace(server_.options.upload_rate);
    ReadSomeBody();
  }

  void ReadSomeBody() {
    if (parser_->is_done()) return Dispatch();
    StartBodyDeadline();
    http::async_read_some(
        stream_, buffer_, *parser_,
        [self = shared_from_this(), started = Clock::now()](error_code ec, size_t n) {
          if (self->EndBodyRead(started, n)) return self->BodyTooSlow();
          if (ec) return self->OnReadError(ec);
          self->ReadSomeBody();
        });
  }

  // Each body read waits at most what keeps the body at its minimum rate (UploadRate); the
  // timer cancels the read rather than closing the socket, so that the 408 can be written.
  void StartBodyDeadline() {
    stream_.expires_never();
    body_too_slow_ = false;
    body_timer_.expires_after(upload_->NextReadDeadline());
    // A deadline that fired just as its read completed must not cut the next read.
    body_timer_.async_wait([self = shared_from_this(), read = ++body_reads_](error_code ec) {
      if (ec || read != self->body_reads_) return;
      self->body_too_slow_ = true;
      self->stream_.cancel();
    });
  }

  // Records a body read that began at `started` and brought `n` bytes; true when the body
  // is now too slow.
  bool EndBodyRead(Clock::time_point started, size_t n) {
    body_timer_.cancel();
    ++body_reads_;
    upload_->Record(n,
                    std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started));
    return body_too_slow_ || upload_->TooSlow();
  }

  void BodyTooSlow() {
    spdlog::info("http: {}: {}", remote_, upload_->Why());
    WriteError(408, "request_timeout", upload_->Why());
  }

  void OnReadError(error_code ec) {
    static const auto& http_category = http::make_error_code(http::error::bad_target).category();
    if (ec == http::error::body_limit) return PayloadTooLarge();
    if (ec == http::error::header_limit) {
      return WriteError(431, "invalid_argument",
                        "request header exceeds " + std::to_string(kMaxHeaderBytes) + " bytes");
    }
    // The client left, timed out, or the server is stopping: nobody to answer.
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec.category() != http_category) {
      return CloseNow();
    }
    WriteError(400, "invalid_argument", "malformed HTTP request");
  }

  void PayloadTooLarge() {
    WriteError(413, "payload_too_large",
               "request body exceeds " + std::to_string(server_.options.max_body_bytes) + " bytes");
  }

  bool StreamsBody(const http::request_header<>& msg) const {
    if (!server_.options.stream_request_body) return false;
    std::string_view target(msg.target().data(), msg.target().size());
    std::string_view method(msg.method_string().data(), msg.method_string().size());
    return server_.options.stream_request_body(method, target.substr(0, target.find('?')));
  }

  void Dispatch() {
    auto request = ToHttpRequest(parser_->release(), remote_);
    parser_.reset();
    if (!request) return WriteError(400, "invalid_argument", "malformed HTTP request");
    RunHandler(std::move(*request));
  }

  // The handler runs at once and reads the body through request.body_stream.
  void DispatchStreaming() {
    auto request = ToHttpRequest(parser_->get().base(), remote_);
    if (!request) {
      parser_.reset();
      return WriteError(400, "invalid_argument", "malformed HTTP request");
    }
    need_continue_ =
        version_ == 11 && beast::iequals(parser_->get()[http::field::expect], "100-continue");
    body_parser_.emplace(std::move(*parser_));
    parser_.reset();
    body_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    upload_.emplace(server_.options.upload_rate);
    body_stream_ = std::make_shared<StreamedBody>(weak_from_this(), strand_);
    request->body_stream = body_stream_;
    RunHandler(std::move(*request));
  }

 public:
  // For StreamedBody::Read: reads up to n body bytes into buf (which the reader keeps
  // alive until Deliver) and delivers the count.
  void ReadBodyChunk(char* buf, size_t n) {
    auto body = body_stream_;
    if (!body) return;
    if (closed_ || !body_parser_) return body->Deliver(-1);
    if (body_parser_->is_done()) return body->Deliver(0);
    if (need_continue_) {
      need_continue_ = false;
      stream_.expires_after(server_.options.idle_timeout);
      net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                       [self = shared_from_this(), buf, n](error_code ec, size_t) {
                         if (ec) return self->body_stream_->Deliver(-1);
                         self->ReadBodyChunk(buf, n);
                       });
      return;
    }
    auto& target = body_parser_->get().body();
    target.data = buf;
    target.size = n;
    target.more = true;
    // Some bytes, not all n: a slow client is judged by its rate, not by a full buffer.
    StartBodyDeadline();
    http::async_read_some(
        stream_, buffer_, *body_parser_,
        [self = shared_from_this(), buf, n, started = Clock::now()](error_code ec, size_t used) {
          auto body = self->body_stream_;
          if (!body || !self->body_parser_) {
            self->body_timer_.cancel();
            return;
          }
          if (self->EndBodyRead(started, used)) {
            self->streamed_body_too_slow_ = true;
            return body->Deliver(-1);
          }
          if (ec == http::error::need_buffer) ec = {};
          if (ec) return body->Deliver(-1);
          size_t got = n - self->body_parser_->get().body().size;
          // Only framing (a chunk header) was read: 0 would tell the reader the body ended.
          if (got == 0 && !self->body_parser_->is_done()) return self->ReadBodyChunk(buf, n);
          body->Deliver(static_cast<long>(got));
        });
  }

 private:
  void RunHandler(HttpRequest request) {
    // Counts as io_context work, so Stop's join waits for the handler and its reply
    // instead of leaving a worker to post into a destroyed io_context.
    auto guard = net::make_work_guard(server_.ioc);
    net::post(server_.workers, [self = shared_from_this(), request = std::move(request),
                                guard = std::move(guard)]() mutable {
      HttpResponse response = self->server_.Invoke(request);
      net::any_io_executor strand = self->strand_;
      // Moving self in matters: the connection must not be released on the worker thread.
      net::post(strand, [self = std::move(self), response = std::move(response)]() mutable {
        self->OnHandled(std::move(response));
      });
      guard.reset();
    });
  }

  void OnHandled(HttpResponse response) {
    if (body_parser_) {
      // A body the handler left unread is drained by LingerClose; the connection cannot be
      // reused after it.
      if (!body_parser_->is_done()) keep_alive_ = false;
      body_parser_.reset();
      body_stream_.reset();
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

  // No worker waits for the answer: the deadline is a timer on the strand.
  void AwaitDeferred(std::shared_ptr<DeferredResponse> deferred) {
    deferred_ = std::move(deferred);
    reply_slot_ = std::make_shared<DeferredReplySlot<HttpConnection>>(shared_from_this(), strand_);
    deferred_timer_.expires_at(deferred_->deadline());
    deferred_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || !self->deferred_) return;
      RunLogged("DeferredResponse::Expire", [&] { self->deferred_->Expire(); });
    });
    bool started = false;
    RunLogged("DeferredResponse::Start", [&] {
      deferred_->Start([slot = reply_slot_](HttpResponse r) { slot->Reply(std::move(r)); });
      started = true;
    });
    if (!started) reply_slot_->Reply(ServerErrorResponse(500, "internal", "internal error"));
  }

 public:
  // On the strand, from DeferredReplySlot::Reply.
  void OnDeferredAnswer(HttpResponse response) {
    if (!deferred_) return;
    deferred_.reset();
    reply_slot_.reset();
    deferred_timer_.cancel();
    if (response.deferred) response = ServerErrorResponse(500, "internal", "internal error");
    OnHandled(std::move(response));
  }

 private:
  void CancelDeferred() {
    if (!deferred_) return;
    reply_slot_->Close();
    reply_slot_.reset();
    deferred_timer_.cancel();
    auto deferred = std::move(deferred_);
    RunLogged("DeferredResponse::Cancel", [&] { deferred->Cancel(); });
  }

  void WriteError(int status, const std::string& code, const std::string& message) {
    keep_alive_ = false;
    WriteResponse(ServerErrorResponse(status, code, message), false);
  }

  void WriteResponse(HttpResponse response, bool keep_alive) {
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

  void LingerClose() {
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTimeout);
    Drain();
  }

  void Drain() {
    stream_.async_read_some(net::buffer(discard_),
                            [self = shared_from_this()](error_code ec, size_t) {
                              if (ec) return self->CloseNow();
                              self->Drain();
                            });
  }

  void CloseNow() {
    closed_ = true;
    CancelDeferred();
    body_timer_.cancel();  // it holds the connection
    if (streaming_) return EndStream();
    stream_.close();
  }

  void WriteStreamHeader(HttpResponse response) {
    auto header = std::make_shared<http::response<http::empty_body>>();
    header->version(version_);
    header->result(static_cast<unsigned>(response.status));
    header->set(http::field::server, "adaptd");
    SetContentType(*header, response.content_type);
    header->set(http::field::cache_control, "no-cache");
    // Stops nginx-style proxies from holding events back in their buffers.
    header->set("X-Accel-Buffering", "no");
    AddHandlerHeaders(*header, response.headers);
    if (response.stream_length) header->content_length(*response.stream_length);
    header->keep_alive(false);
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*header);
    stream_.expires_after(server_.options.idle_timeout);
    http::async_write_header(
        stream_, *serializer,
        [self = shared_from_this(), header, serializer, stream = std::move(response.stream)](
            error_code ec, size_t) mutable { self->OnStreamHeaderWritten(ec, std::move(stream)); });
  }

  void OnStreamHeaderWritten(error_code ec, std::shared_ptr<ResponseStream> stream) {
    if (ec || closed_) return CloseNow();
    if (head_) return LingerClose();
    streaming_ = true;
    stream_.expires_never();
    response_stream_ = std::move(stream);
    sink_ = std::make_shared<ConnectionSink>(weak_from_this(), strand_);
    WaitForDisconnect();
    bool started = false;
    RunLogged("ResponseStream::Start", [&] {
      response_stream_->Start(sink_);
      started = true;
    });
    if (!started) EndStream();
  }

  // A stream's client sends nothing more, so a pending read is how a disconnect shows up.
  // It bypasses tcp_stream so that the idle timeout applies to writes only.
  void WaitForDisconnect() {
    stream_.socket().async_read_some(net::buffer(discard_),
                                     [self = shared_from_this()](error_code ec, size_t) {
                                       if (ec) return self->EndStream();
                                       self->WaitForDisconnect();
                                     });
  }

  void WriteNextChunk() {
    if (outbox_.empty()) {
      writing_ = false;
      if (finish_when_drained_) EndStream();
      return;
    }
    writing_ = true;
    stream_.expires_after(server_.options.idle_timeout);
    net::async_write(
        stream_, net::buffer(outbox_.front()),
        [self = shared_from_this()](error_code ec, size_t) { self->OnChunkWritten(ec); });
  }

  void OnChunkWritten(error_code ec) {
    sink_->Written(outbox_.front().size());
    outbox_.pop_front();
    if (ec || stream_ended_) {
      writing_ = false;
      return EndStream();
    }
    WriteNextChunk();
  }

  // Leaves outbox_ alone: a write in flight still points into its front.
  void EndStream() {
    if (stream_ended_) return;
    stream_ended_ = true;
    closed_ = true;
    sink_->MarkClosed();
    stream_.close();
    StopResponseStream();
  }

  void StopResponseStream() {
    auto stream = std::move(response_stream_);
    RunLogged("ResponseStream::Stop", [&] { stream->Stop(); });
  }

  ServerContext& server_;
  beast::tcp_stream stream_;
  const net::any_io_executor strand_;
  const std::string remote_;
  ConnectionLimiter::Slot slot_;
  beast::flat_buffer buffer_;
  bool kept_alive_ = false;  // a request was read: the next one may take idle_timeout to start
  std::optional<UploadRate> upload_;  // the body being read
  net::steady_timer body_timer_;
  uint64_t body_reads_ = 0;
  bool body_too_slow_ = false;
  bool streamed_body_too_slow_ = false;
  std::optional<http::request_parser<http::string_body>> parser_;
  // While a handler reads a streamed body.
  std::optional<http::request_parser<http::buffer_body>> body_parser_;
  std::shared_ptr<StreamedBody> body_stream_;
  bool need_continue_ = false;
  std::array<char, 4096> discard_{};
  unsigned version_ = 11;
  bool head_ = false;
  bool keep_alive_ = false;
  bool closed_ = false;

  // While a DeferredResponse is awaited.
  std::shared_ptr<DeferredResponse> deferred_;
  std::shared_ptr<DeferredReplySlot<HttpConnection>> reply_slot_;
  net::steady_timer deferred_timer_;

  std::shared_ptr<ResponseStream> response_stream_;
  std::shared_ptr<ConnectionSink> sink_;
  std::deque<std::string> outbox_;
  bool streaming_ = false;
  bool writing_ = false;
  bool finish_when_drained_ = false;
  bool stream_ended_ = false;
};

namespace {

bool ConnectionSink::Send(std::string data) {
  std::lock_guard lock(mu_);
  if (closed_) return false;
  if (queued_bytes_ + data.size() > kMaxQueuedStreamBytes) {
    closed_ = true;
    net::post(strand_, [connection = connection_] {
      if (auto c = connection.lock()) c->DropSlowConsumer();
    });
    return false;
  }
  queued_bytes_ += data.size();
  net::post(strand_, [connection = connection_, data = std::move(data)]() mutable {
    if (auto c = connection.lock()) c->QueueChunk(std::move(data));
  });
  return true;
}

long StreamedBody::Read(char* buf, size_t n) {
  std::unique_lock lock(mu_);
  if (ended_) return result_ < 0 ? -1 : 0;
  if (n == 0) return 0;
  ready_ = false;
  net::post(strand_, [connection = connection_, buf, n, self = this] {
    if (auto c = connection.lock()) return c->ReadBodyChunk(buf, n);
    self->Deliver(-1);
  });
  ready_cv_.wait(lock, [&] { return ready_; });
  return result_;
}

void ConnectionSink::Close() {
  std::lock_guard lock(mu_);
  if (closed_) return;
  closed_ = true;
  room_.notify_all();
  net::post(strand_, [connection = connection_] {
    if (auto c = connection.lock()) c->FinishStream();
  });
}

}  // namespace

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
