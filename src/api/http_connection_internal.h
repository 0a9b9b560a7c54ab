// The HttpConnection class, private to its own files: http_connection.cc (reading requests,
// running the handler, writing plain responses, closing), http_request_body.cc (reading a body,
// streamed or not, under its deadline), http_response_stream.cc (streamed responses) and
// http_deferred_reply.cc (answers that come later). Nothing else includes this header: the
// rest of the server sees http_connection.h.
#pragma once

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "api/http_connection.h"
#include "api/upload_rate.h"
#include "base/log.h"

namespace adapt::api {

inline constexpr uint32_t kMaxHeaderBytes = 64 * 1024;
// A streamed body is read this much at a time (http_request_body.cc).
inline constexpr size_t kStreamedBodyRead = 64 * 1024;
// The most a connection holds of what it has read and not yet parsed: a head, a body read, and
// room for one chunk-size line or trailer section. Beast keeps a whole chunk extension or
// trailer section in the buffer, and neither header_limit nor body_limit counts those bytes:
// without this bound, one unauthenticated connection sending a chunk extension of 300 MB held
// 1 GB of adaptd's memory. Past it, the request is refused (431).
inline constexpr size_t kMaxBufferedBytes = kMaxHeaderBytes + kStreamedBodyRead + 64 * 1024;
inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

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
  ConnectionSink(std::weak_ptr<HttpConnection> connection, boost::asio::any_io_executor strand)
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
    strand_.reset();
    room_.notify_all();
  }
  void Written(size_t n) {
    std::lock_guard lock(mu_);
    queued_bytes_ -= n;
    room_.notify_all();
  }

 private:
  // Posts happen under mu_ and only while !closed_, and the strand is let go as the sink
  // closes: a producer may keep the sink after adaptd's HTTP server and its io_context are
  // gone, and a strand released then would reach the destroyed strand service.
  mutable std::mutex mu_;
  std::condition_variable room_;
  bool closed_ = false;
  size_t queued_bytes_ = 0;
  const std::weak_ptr<HttpConnection> connection_;
  std::optional<boost::asio::any_io_executor> strand_;
};

// A streamed request body: Read, on the handler's worker thread, asks the connection's
// strand for the next bytes and waits for them, so the socket is read only as fast as the
// handler consumes (backpressure all the way to the client).
class StreamedBody final : public RequestBody {
 public:
  StreamedBody(std::weak_ptr<HttpConnection> connection, boost::asio::any_io_executor strand)
      : connection_(std::move(connection)), strand_(std::move(strand)) {}

  long Read(char* buf, size_t n) override;

  // On the connection's strand: the outcome of the read Read asked for.
  void Deliver(long result) {
    std::lock_guard lock(mu_);
    if (result <= 0) {
      ended_ = true;
      strand_.reset();
    }
    result_ = result;
    ready_ = true;
    ready_cv_.notify_all();
  }
  // As the connection ends: every later Read is -1 (the client is gone) and posts nothing.
  // A read still waiting is woken, in case the io_context dropped the read it had posted.
  void Detach() {
    std::lock_guard lock(mu_);
    if (!ended_) result_ = -1;
    ended_ = true;
    strand_.reset();  // the handler may keep the body after the io_context is gone
    ready_ = true;
    ready_cv_.notify_all();
  }

 private:
  const std::weak_ptr<HttpConnection> connection_;
  std::mutex mu_;
  std::optional<boost::asio::any_io_executor> strand_;
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
  DeferredReplySlot(std::shared_ptr<Connection> connection, boost::asio::any_io_executor strand)
      : connection_(std::move(connection)), strand_(std::move(strand)) {}
  void Reply(HttpResponse response) {
    std::lock_guard lock(mu_);
    if (!connection_) return;
    boost::asio::post(*strand_, [c = std::move(connection_), r = std::move(response)]() mutable {
      c->OnDeferredAnswer(std::move(r));
    });
    strand_.reset();
  }
  // Posts happen only before Close, which the connection calls before it ends: none can
  // reach a destroyed io_context. The strand goes with the connection, for the same reason:
  // whoever answers (an MCP call on its pool) may keep the slot after the server is gone.
  void Close() {
    std::lock_guard lock(mu_);
    connection_.reset();
    strand_.reset();
  }

 private:
  std::mutex mu_;
  std::shared_ptr<Connection> connection_;
  std::optional<boost::asio::any_io_executor> strand_;
};

// Every member function runs on the connection's strand.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
  using Clock = std::chrono::steady_clock;
  using error_code = boost::system::error_code;

 public:
  HttpConnection(ServerContext& server, boost::asio::ip::tcp::socket socket, std::string remote,
                 ConnectionLimiter::Slot slot);
  ~HttpConnection();

  void Run();
  void Close();

  // Streamed responses (http_response_stream.cc).
  void QueueChunk(std::string data);
  void FinishStream();
  void DropSlowConsumer();

 private:
  // Requests (http_connection.cc).
  void ReadHeader();
  void ReadHead();
  void OnHeader(error_code ec);
  void OnReadError(error_code ec);
  void PayloadTooLarge();
  void Dispatch();
  void RunHandler(HttpRequest request);
  void OnHandled(HttpResponse response);

  // Request bodies (http_request_body.cc).
  void ReadBody();
  void ReadSomeBody();
  void StartBodyDeadline();
  bool EndBodyRead(Clock::time_point started, size_t n);
  void BodyTooSlow();
  bool StreamsBody(const boost::beast::http::request_header<>& msg) const;
  void DispatchStreaming();

 public:
  // For StreamedBody::Read: reads up to n body bytes into buf (which the reader keeps
  // alive until Deliver) and delivers the count.
  void ReadBodyChunk(char* buf, size_t n);

 private:
  void FillBodyChunk(char* buf, size_t n, size_t filled);

  // Deferred answers (http_deferred_reply.cc).
  void AwaitDeferred(std::shared_ptr<DeferredResponse> deferred);

 public:
  // On the strand, from DeferredReplySlot::Reply.
  void OnDeferredAnswer(HttpResponse response);

 private:
  void CancelDeferred();

  // Plain responses and closing (http_connection.cc).
  void WriteError(int status, const std::string& code, const std::string& message);
  void WriteResponse(HttpResponse response, bool keep_alive);
  void LingerClose();
  void Drain();
  void CloseNow();

  // Streamed responses (http_response_stream.cc).
  void WriteStreamHeader(HttpResponse response);
  void OnStreamHeaderWritten(error_code ec, std::shared_ptr<ResponseStream> stream);
  void WaitForDisconnect();
  void WriteNextChunk();
  void OnChunkWritten(error_code ec);
  void EndStream();
  void StopResponseStream();

  ServerContext& server_;
  boost::beast::tcp_stream stream_;
  const boost::asio::any_io_executor strand_;
  const std::string remote_;
  ConnectionLimiter::Slot slot_;
  boost::beast::flat_buffer buffer_{kMaxBufferedBytes};
  bool kept_alive_ = false;  // a request was read: the next one may take idle_timeout to start
  std::optional<UploadRate> upload_;  // the body being read
  boost::asio::steady_timer body_timer_;
  uint64_t body_reads_ = 0;
  bool body_too_slow_ = false;
  bool streamed_body_too_slow_ = false;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  // While a handler reads a streamed body.
  std::optional<boost::beast::http::request_parser<boost::beast::http::buffer_body>> body_parser_;
  std::shared_ptr<StreamedBody> body_stream_;
  bool need_continue_ = false;
  std::array<char, 4096> discard_{};
  unsigned version_ = 11;
  std::string path_;  // the request's path without the query: a 413's answer depends on it
  bool head_ = false;
  bool keep_alive_ = false;
  bool closed_ = false;

  // While a DeferredResponse is awaited.
  std::shared_ptr<DeferredResponse> deferred_;
  std::shared_ptr<DeferredReplySlot<HttpConnection>> reply_slot_;
  boost::asio::steady_timer deferred_timer_;

  std::shared_ptr<ResponseStream> response_stream_;
  std::shared_ptr<ConnectionSink> sink_;
  std::deque<std::string> outbox_;
  bool streaming_ = false;
  bool writing_ = false;
  bool finish_when_drained_ = false;
  bool stream_ended_ = false;
};

}  // namespace adapt::api
