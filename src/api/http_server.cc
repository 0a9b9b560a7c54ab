#include "api/http_server.h"

#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>
#include <cstring>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

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
// Accept failures such as EMFILE persist for a while; retrying at once would spin.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

std::string ToString(beast::string_view s) { return std::string(s.data(), s.size()); }

// Client-controlled text in logs: quoted and escaped so it cannot forge log lines.
std::string Quote(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse ErrorResponse(int status, const std::string& code, const std::string& message) {
  HttpResponse response;
  response.status = status;
  response.body = nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump();
  return response;
}

// Fails on a broken escape and on NUL, which no later layer should have to consider.
std::optional<std::string> PercentDecode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      const char* digits = in.data() + i + 1;
      unsigned value = 0;
      if (i + 2 >= in.size()) return std::nullopt;
      auto [end, err] = std::from_chars(digits, digits + 2, value, 16);
      if (err != std::errc() || end != digits + 2) return std::nullopt;
      c = static_cast<char>(value);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;
    out.push_back(c);
  }
  return out;
}

// Only origin-form targets ("/path?query") are served; nullopt means 400.
std::optional<HttpRequest> ToHttpRequest(http::request<http::string_body>&& msg,
                                         const std::string& remote) {
  std::string_view target(msg.target().data(), msg.target().size());
  if (target.empty() || target.front() != '/') return std::nullopt;
  HttpRequest request;
  const size_t question = target.find('?');
  auto path = PercentDecode(target.substr(0, question), false);
  if (!path) return std::nullopt;
  request.path = std::move(*path);
  std::string_view rest =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq), true);
    auto value = PercentDecode(
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!key || !value) return std::nullopt;
    request.query.emplace(std::move(*key), std::move(*value));
  }
  request.method = ToString(msg.method_string());
  for (const auto& field : msg) {
    std::string name = ToString(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = ToString(field.value());
    auto [it, inserted] = request.headers.emplace(std::move(name), value);
    if (!inserted) it->second += ", " + value;
  }
  request.body = std::move(msg.body());
  request.remote = remote;
  return request;
}

bool IsSafeHeaderValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

bool IsSafeHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 &&
        std::strchr("!#$%&'*+-.^_`|~", c) == nullptr) {
      return false;
    }
  }
  return true;
}

// Beast does not validate field text, so a handler echoing client input could otherwise
// split the response. Framing headers are the server's alone.
void AddHandlerHeaders(http::fields& fields,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
  for (const auto& [name, value] : headers) {
    if (!IsSafeHeaderName(name) || !IsSafeHeaderValue(value)) {
      spdlog::warn("http: dropping invalid response header {}", Quote(name));
      continue;
    }
    if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding") ||
        beast::iequals(name, "connection")) {
      continue;
    }
    fields.insert(name, value);
  }
}

void SetContentType(http::fields& fields, const std::string& content_type) {
  if (!content_type.empty() && IsSafeHeaderValue(content_type)) {
    fields.set(http::field::content_type, content_type);
  }
}

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

class Session;

// What every connection shares with the server.
struct ServerContext {
  ServerContext(HttpServerOptions opts, HttpHandler fn, net::thread_pool& pool)
      : options(std::move(opts)),
        handler(std::move(fn)),
        workers(pool),
        ioc(std::max(1, options.io_threads)) {}

  HttpResponse Invoke(const HttpRequest& request) const {
    try {
      return handler(request);
    } catch (const std::exception& e) {
      spdlog::error("http handler for {} {} threw: {}", request.method, Quote(request.path),
                    e.what());
    } catch (...) {
      spdlog::error("http handler for {} {} threw a non-standard exception", request.method,
                    Quote(request.path));
    }
    return ErrorResponse(500, "internal", "internal error");
  }

  // False once the server is stopping: the caller drops the connection.
  bool Register(const std::shared_ptr<Session>& session) {
    std::lock_guard lock(mu);
    if (stopping) return false;
    sessions.emplace(session.get(), session);
    return true;
  }
  void Unregister(Session* session) {
    std::lock_guard lock(mu);
    sessions.erase(session);
  }

  const HttpServerOptions options;
  const HttpHandler handler;
  net::thread_pool& workers;
  std::mutex mu;
  std::atomic<bool> stopping{false};                              // written under mu
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;  // guarded by mu
  // Declared last so it goes first: destroying it may destroy sessions, which unregister.
  net::io_context ioc;
};

class SessionSink final : public StreamSink {
 public:
  SessionSink(std::weak_ptr<Session> session, net::any_io_executor strand)
      : session_(std::move(session)), strand_(std::move(strand)) {}

  bool Send(std::string data) override;
  bool Closed() const override {
    std::lock_guard lock(mu_);
    return closed_;
  }
  void Close() override;

  // On the session's strand.
  void MarkClosed() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  void Written(size_t n) {
    std::lock_guard lock(mu_);
    queued_bytes_ -= n;
  }

 private:
  // Posts happen under mu_ and only while !closed_. The session marks the sink closed
  // before it ends, and the io_context outlives every session, so no post can reach a
  // destroyed io_context however long a caller keeps the sink.
  mutable std::mutex mu_;
  bool closed_ = false;
  size_t queued_bytes_ = 0;
  const std::weak_ptr<Session> session_;
  const net::any_io_executor strand_;
};

// One connection. Every member function runs on the connection's strand.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerContext& server, tcp::socket socket, std::string remote)
      : server_(server),
        stream_(std::move(socket)),
        strand_(stream_.get_executor()),
        remote_(std::move(remote)) {}

  ~Session() {
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
    parser_->body_limit(server_.options.max_body_bytes);
    stream_.expires_after(server_.options.idle_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(error_code ec) {
    if (ec) return OnReadError(ec);
    const auto& msg = parser_->get();
    version_ = msg.version() == 10 ? 10 : 11;
    head_ = msg.method() == http::verb::head;
    keep_alive_ = msg.keep_alive();
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
    stream_.expires_after(server_.options.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->Dispatch();
                     });
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

  void Dispatch() {
    auto request = ToHttpRequest(parser_->release(), remote_);
    parser_.reset();
    if (!request) return WriteError(400, "invalid_argument", "malformed HTTP request");
    // Counts as io_context work, so Stop's join waits for the handler and its reply
    // instead of leaving a worker to post into a destroyed io_context.
    auto guard = net::make_work_guard(server_.ioc);
    net::post(server_.workers, [self = shared_from_this(), request = std::move(*request),
                                guard = std::move(guard)]() mutable {
      HttpResponse response = self->server_.Invoke(request);
      net::any_io_executor strand = self->strand_;
      // Moving self in matters: the session must not be released on the worker thread.
      net::post(strand, [self = std::move(self), response = std::move(response)]() mutable {
        self->OnHandled(std::move(response));
      });
      guard.reset();
    });
  }

  void OnHandled(HttpResponse response) {
    if (closed_) return;
    if (response.status < 200 || response.status > 599) {
      spdlog::error("http handler returned invalid status {}; answering 500", response.status);
      response = ErrorResponse(500, "internal", "internal error");
    }
    if (response.stream) return WriteStreamHeader(std::move(response));
    WriteResponse(std::move(response), keep_alive_ && !server_.stopping);
  }

  void WriteError(int status, const std::string& code, const std::string& message) {
    keep_alive_ = false;
    WriteResponse(ErrorResponse(status, code, message), false);
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
    sink_ = std::make_shared<SessionSink>(weak_from_this(), strand_);
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
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::array<char, 4096> discard_{};
  unsigned version_ = 11;
  bool head_ = false;
  bool keep_alive_ = false;
  bool closed_ = false;

  std::shared_ptr<ResponseStream> response_stream_;
  std::shared_ptr<SessionSink> sink_;
  std::deque<std::string> outbox_;
  bool streaming_ = false;
  bool writing_ = false;
  bool finish_when_drained_ = false;
  bool stream_ended_ = false;
};

bool SessionSink::Send(std::string data) {
  std::lock_guard lock(mu_);
  if (closed_) return false;
  if (queued_bytes_ + data.size() > kMaxQueuedStreamBytes) {
    closed_ = true;
    net::post(strand_, [session = session_] {
      if (auto s = session.lock()) s->DropSlowConsumer();
    });
    return false;
  }
  queued_bytes_ += data.size();
  net::post(strand_, [session = session_, data = std::move(data)]() mutable {
    if (auto s = session.lock()) s->QueueChunk(std::move(data));
  });
  return true;
}

void SessionSink::Close() {
  std::lock_guard lock(mu_);
  if (closed_) return;
  closed_ = true;
  net::post(strand_, [session = session_] {
    if (auto s = session.lock()) s->FinishStream();
  });
}

std::string FormatAddress(const std::string& host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions opts, HttpHandler handler, net::thread_pool& workers)
      : ctx_(std::move(opts), std::move(handler), workers),
        acceptor_(net::make_strand(ctx_.ioc)),
        retry_timer_(acceptor_.get_executor()) {}
  ~Impl() { Stop(); }

  Status Start() {
    std::lock_guard lock(lifecycle_mu_);
    if (running_) return Status(Code::kConflict, "http server already started");
    const std::string address = FormatAddress(ctx_.options.host, ctx_.options.port);
    auto fail = [&](const std::string& why) {
      error_code ignored;
      acceptor_.close(ignored);
      return Status(Code::kUnavailable, "listening on " + address + ": " + why);
    };
    error_code ec;
    tcp::resolver resolver(ctx_.ioc);
    auto results = resolver.resolve(ctx_.options.host, std::to_string(ctx_.options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec) return fail(ec.message());
    if (results.empty()) return fail("no address");
    // "localhost" often resolves to ::1 first; IPv4 is what clients usually try.
    tcp::endpoint endpoint = results.begin()->endpoint();
    for (const auto& entry : results) {
      if (entry.endpoint().address().is_v4()) {
        endpoint = entry.endpoint();
        break;
      }
    }
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return fail(ec.message());
    auto local = acceptor_.local_endpoint(ec);
    if (ec) return fail(ec.message());
    port_ = local.port();

    ctx_.ioc.restart();
    {
      std::lock_guard sessions_lock(ctx_.mu);
      ctx_.stopping = false;
    }
    work_guard_.emplace(ctx_.ioc.get_executor());
    running_ = true;
    net::post(acceptor_.get_executor(), [this] { Accept(); });
    const int threads = std::max(1, ctx_.options.io_threads);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { RunIo(); });
    return Status::Ok();
  }

  uint16_t port() const { return port_; }

  void Stop() {
    std::lock_guard lock(lifecycle_mu_);
    if (!running_) return;
    running_ = false;
    net::post(acceptor_.get_executor(), [this] {
      error_code ignored;
      acceptor_.close(ignored);
      retry_timer_.cancel();
    });
    std::vector<std::shared_ptr<Session>> live;
    {
      std::lock_guard sessions_lock(ctx_.mu);
      ctx_.stopping = true;
      for (auto& [ptr, weak] : ctx_.sessions) {
        if (auto session = weak.lock()) live.push_back(std::move(session));
      }
    }
    for (auto& session : live) session->Close();
    live.clear();
    // The threads return once every connection and running handler has finished.
    work_guard_.reset();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  void RunIo() {
    for (;;) {
      try {
        ctx_.ioc.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("http I/O thread: unexpected exception: {}", e.what());
      }
    }
  }

  // On the acceptor's strand, like OnAccept.
  void Accept() {
    acceptor_.async_accept(net::make_strand(ctx_.ioc),
                           [this](error_code ec, tcp::socket s) { OnAccept(ec, std::move(s)); });
  }

  void OnAccept(error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open() || ctx_.stopping) return;
    if (ec) {
      spdlog::warn("http: accept failed: {}", ec.message());
      retry_timer_.expires_after(kAcceptRetryDelay);
      retry_timer_.async_wait([this](error_code wait_ec) {
        if (!wait_ec && acceptor_.is_open()) Accept();
      });
      return;
    }
    error_code remote_ec;
    auto remote = socket.remote_endpoint(remote_ec);
    auto session = std::make_shared<Session>(
        ctx_, std::move(socket), remote_ec ? std::string() : remote.address().to_string());
    if (ctx_.Register(session)) session->Run();
    Accept();
  }

  ServerContext ctx_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
  std::mutex lifecycle_mu_;
  bool running_ = false;  // guarded by lifecycle_mu_
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_guard_;
  std::vector<std::thread> threads_;
  std::atomic<uint16_t> port_{0};
};

HttpServer::HttpServer(HttpServerOptions opts, HttpHandler handler,
                       boost::asio::thread_pool& workers)
    : impl_(std::make_unique<Impl>(std::move(opts), std::move(handler), workers)) {}

HttpServer::~HttpServer() { impl_->Stop(); }

Status HttpServer::Start() { return impl_->Start(); }

uint16_t HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace adapt::api
