#include "api/http_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "api/http_connection.h"
#include "base/background_work.h"
#include "base/log.h"

namespace adapt::api {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// Accept failures such as EMFILE persist for a while; retrying at once would spin.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

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

  Status Listen() {
    std::lock_guard lock(lifecycle_mu_);
    return ListenLocked();
  }

  Status Start() {
    std::lock_guard lock(lifecycle_mu_);
    if (running_) return Status(Code::kConflict, "http server already started");
    if (!acceptor_.is_open()) RETURN_IF_ERROR(ListenLocked());

    ctx_.ioc.restart();
    {
      std::lock_guard connections_lock(ctx_.mu);
      ctx_.stopping = false;
    }
    work_guard_.emplace(ctx_.ioc.get_executor());
    running_ = true;
    net::post(acceptor_.get_executor(), [this] { Accept(); });
    const int threads = std::max(1, ctx_.options.io_threads);
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back(GuardedRun("http I/O thread", ctx_.ioc));
    return Status::Ok();
  }

  uint16_t port() const { return port_; }

  void Stop() {
    std::lock_guard lock(lifecycle_mu_);
    if (!running_) {
      // Listened but never started: no I/O thread touches the acceptor.
      error_code ignored;
      acceptor_.close(ignored);
      return;
    }
    running_ = false;
    net::post(acceptor_.get_executor(), [this] {
      error_code ignored;
      acceptor_.close(ignored);
      retry_timer_.cancel();
    });
    ctx_.CloseConnections();
    // The threads return once every connection and running handler has finished.
    work_guard_.reset();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  // Binds and listens once; a second call while the listener is open does nothing.
  Status ListenLocked() {
    if (acceptor_.is_open()) return Status::Ok();
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
    return Status::Ok();
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
    ServeConnection(ctx_, std::move(socket));
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

Status HttpServer::Listen() { return impl_->Listen(); }

Status HttpServer::Start() { return impl_->Start(); }

uint16_t HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace adapt::api
