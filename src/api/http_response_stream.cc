// Streamed responses: the handler's ResponseStream writes through a ConnectionSink, whose
// chunks the connection writes in order; a client that reads too slowly is dropped.
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "api/http_connection_internal.h"
#include "api/http_response_fields.h"
#include "base/log.h"

namespace adapt::api {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// A client that stops reading a stream must not make the server buffer without bound.
constexpr size_t kMaxQueuedStreamBytes = 8 << 20;

}  // namespace

bool ConnectionSink::Send(std::string data) {
  std::lock_guard lock(mu_);
  if (closed_) return false;
  if (queued_bytes_ + data.size() > kMaxQueuedStreamBytes) {
    closed_ = true;
    net::post(*strand_, [connection = connection_] {
      if (auto c = connection.lock()) c->DropSlowConsumer();
    });
    strand_.reset();
    return false;
  }
  queued_bytes_ += data.size();
  net::post(*strand_, [connection = connection_, data = std::move(data)]() mutable {
    if (auto c = connection.lock()) c->QueueChunk(std::move(data));
  });
  return true;
}

void ConnectionSink::Close() {
  std::lock_guard lock(mu_);
  if (closed_) return;
  closed_ = true;
  room_.notify_all();
  net::post(*strand_, [connection = connection_] {
    if (auto c = connection.lock()) c->FinishStream();
  });
  strand_.reset();
}

void HttpConnection::QueueChunk(std::string data) {
  if (stream_ended_) return;
  outbox_.push_back(std::move(data));
  if (!writing_) WriteNextChunk();
}

void HttpConnection::FinishStream() {
  if (stream_ended_) return;
  finish_when_drained_ = true;
  if (!writing_) EndStream();
}

void HttpConnection::DropSlowConsumer() {
  spdlog::warn("http: closing stream to {}: client reads too slowly", remote_);
  EndStream();
}

void HttpConnection::WriteStreamHeader(HttpResponse response) {
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

void HttpConnection::OnStreamHeaderWritten(error_code ec, std::shared_ptr<ResponseStream> stream) {
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
void HttpConnection::WaitForDisconnect() {
  stream_.socket().async_read_some(net::buffer(discard_),
                                   [self = shared_from_this()](error_code ec, size_t) {
                                     if (ec) return self->EndStream();
                                     self->WaitForDisconnect();
                                   });
}

void HttpConnection::WriteNextChunk() {
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

void HttpConnection::OnChunkWritten(error_code ec) {
  sink_->Written(outbox_.front().size());
  outbox_.pop_front();
  if (ec || stream_ended_) {
    writing_ = false;
    return EndStream();
  }
  WriteNextChunk();
}

// Leaves outbox_ alone: a write in flight still points into its front.
void HttpConnection::EndStream() {
  if (stream_ended_) return;
  stream_ended_ = true;
  closed_ = true;
  sink_->MarkClosed();
  stream_.close();
  StopResponseStream();
}

void HttpConnection::StopResponseStream() {
  auto stream = std::move(response_stream_);
  RunLogged("ResponseStream::Stop", [&] { stream->Stop(); });
}

}  // namespace adapt::api
