// The transparent TLS proxy of sandboxes with TLS hostname rules. nftables redirects the
// sandbox's TCP to its rules' ports here; the original destination comes from conntrack
// (SO_ORIGINAL_DST). The proxy reads the ClientHello (never decrypting anything) and splices
// the connection to that destination only when its SNI is listed for that port and the
// destination is an address the sandbox's DNS proxy returned for that name (HostnameTable).
// Anything else (plaintext, no SNI, encrypted ClientHello, a server-speaks-first protocol
// that never sends a ClientHello) is closed. Non-blocking with bounded buffers: at most
// kMaxConnections at once, kHelloTimeout for the ClientHello, kConnectTimeout upstream.
#pragma once

#include <atomic>
// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "net/hostname_table.h"

namespace adapt::net {

class SniProxy {
 public:
  static constexpr int kMaxConnections = 1024;
  static constexpr std::chrono::seconds kHelloTimeout{10};
  static constexpr std::chrono::seconds kConnectTimeout{10};
  static constexpr size_t kPumpBuffer = 16 * 1024;

  SniProxy(boost::asio::io_context& io, HostnameTable& table);
  // Listens on 0.0.0.0:`port` (0: any free port).
  Status Start(uint16_t port = 0);
  uint16_t port() const { return port_; }
  void Stop();

  class Session;  // one proxied connection (sni_proxy.cc)

 private:
  void Accept();

  boost::asio::io_context& io_;
  HostnameTable& table_;
  boost::asio::ip::tcp::acceptor acceptor_;
  // Shared with the sessions, which may outlive the proxy inside a stopped io_context.
  std::shared_ptr<std::atomic<int>> connections_ = std::make_shared<std::atomic<int>>(0);
  uint16_t port_ = 0;
};

}  // namespace adapt::net
