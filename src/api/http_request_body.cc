// Reading a request's body: whole before the handler runs, or streamed to a handler that
// reads it as it comes (StreamedBody); either way each read has a deadline that keeps the
// body at its minimum rate.
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <limits>

#include "api/body_read_step.h"
#include "api/http_connection_internal.h"
#include "api/http_request_decoding.h"
#include "base/log.h"

namespace adapt::api {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

}  // namespace

long StreamedBody::Read(char* buf, size_t n) {
  std::unique_lock lock(mu_);
  if (ended_) return result_ < 0 ? -1 : 0;
  if (n == 0) return 0;
  ready_ = false;
  net::post(*strand_, [connection = connection_, buf, n, self = this] {
    if (auto c = connection.lock()) return c->ReadBodyChunk(buf, n);
    self->Deliver(-1);
  });
  ready_cv_.wait(lock, [&] { return ready_; });
  return result_;
}

void HttpConnection::ReadBody() {
  upload_.emplace(server_.options.upload_rate);
  ReadSomeBody();
}

void HttpConnection::ReadSomeBody() {
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
void HttpConnection::StartBodyDeadline() {
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
bool HttpConnection::EndBodyRead(Clock::time_point started, size_t n) {
  body_timer_.cancel();
  ++body_reads_;
  upload_->Record(n, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started));
  return body_too_slow_ || upload_->TooSlow();
}

void HttpConnection::BodyTooSlow() {
  spdlog::info("http: {}: {}", remote_, upload_->Why());
  WriteError(408, "request_timeout", upload_->Why());
}

bool HttpConnection::StreamsBody(const http::request_header<>& msg) const {
  if (!server_.options.stream_request_body) return false;
  std::string_view target(msg.target().data(), msg.target().size());
  std::string_view method(msg.method_string().data(), msg.method_string().size());
  return server_.options.stream_request_body(method,
                                             RoutedPath(target.substr(0, target.find('?'))));
}

// The handler runs at once and reads the body through request.body_stream.
void HttpConnection::DispatchStreaming() {
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
  // Beast reads the socket into buffer_, each read its free capacity (at least 512 bytes, at
  // most 64 KiB): with the header's buffer full, a large upload took one recv, one deadline
  // timer and one parser pass per 512 bytes, which bounded the storage gateway's PUT
  // (bench/README.md, "storage"). OnHandled gives the memory back.
  buffer_.reserve(kStreamedBodyRead);
  upload_.emplace(server_.options.upload_rate);
  body_stream_ = std::make_shared<StreamedBody>(weak_from_this(), strand_);
  request->body_stream = body_stream_;
  RunHandler(std::move(*request));
}

void HttpConnection::ReadBodyChunk(char* buf, size_t n) {
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
  FillBodyChunk(buf, n, 0);
}

// Reads into buf[filled, n) and hands buf's bytes to the reader when NextBodyReadStep says.
void HttpConnection::FillBodyChunk(char* buf, size_t n, size_t filled) {
  auto& target = body_parser_->get().body();
  target.data = buf + filled;
  target.size = n - filled;
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
        error_code ignored;
        size_t waiting = self->stream_.socket().available(ignored);
        if (NextBodyReadStep(got, n, self->body_parser_->is_done(), waiting) ==
            BodyReadStep::kReadMore) {
          if (self->closed_) return body->Deliver(-1);
          return self->FillBodyChunk(buf, n, got);
        }
        body->Deliver(static_cast<long>(got));
      });
}

}  // namespace adapt::api
