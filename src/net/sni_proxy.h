// The transparent TLS proxy of sandboxes with TLS hostname rules. nftables redirects the
// sandbox's TCP to its rules' ports here; the original destination comes from conntrack
// (SO_ORIGINAL_DST). The proxy reads the ClientHello (never decrypting anything) and splices
// the connection to that destination only when its SNI is listed for that port and the
// destination is an address the sandbox's DNS proxy returned for that name (HostnameTable).
// Anything else (plaintext, no SNI, encrypted ClientHello, a server-speaks-first protocol
// that never sends a ClientHello) is closed, and so is a destination that is one of the
// host's own addresses (HostAddressWatch). Non-blocking with bounded buffers: at most
// `limits` connections (in all, and per sandbox; a full proxy closes the connection waiting
// longest for its ClientHello for a new one), kHelloTimeout for the ClientHello,
// kConnectTimeout upstream, and `idle_timeout` without a byte either way once spliced. One
// organization's sandboxes splice at most PerOrganizationLimit(connections) at once (its
// organization is read off the I/O thread), and a sandbox's sessions are closed when its
// address is released (CloseFrom): its next holder must not inherit them.
#pragma once

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/connection_limiter.h"
#include "base/org_counter.h"
#include "base/status.h"
#include "net/accept_retry.h"
#include "net/host_address_watch.h"
#include "net/hostname_table.h"

namespace adapt::net {

struct SniProxyLimits {
  ConnectionLimits connections{1024, 256};  // per client: per sandbox
  std::chrono::seconds idle_timeout{900};
};

class SniProxy {
 public:
  static constexpr std::chrono::seconds kHelloTimeout{10};
  static constexpr std::chrono::seconds kConnectTimeout{10};
  static constexpr size_t kPumpBuffer = 16 * 1024;

  // The organization of a sandbox, by its id: "" for one that has none yet (a warm pool
  // member), nullopt when it could not be read (the session is refused: the cap does not fail
  // open). It reads adaptd's store, so it runs on a lookup thread of the proxy's own.
  using OwnerOf = std::function<std::optional<std::string>(const std::string& sandbox_id)>;

  SniProxy(boost::asio::io_context& io, HostnameTable& table, const HostAddressWatch& host,
           SniProxyLimits limits);
  ~SniProxy();
  // Before Start; without one, sessions are not counted by organization.
  void set_owner_of(OwnerOf owner_of) { owner_of_ = std::move(owner_of); }
  // Listens on 0.0.0.0:`port` (0: any free port).
  Status Start(uint16_t port = 0);
  uint16_t port() const { return port_; }
  void Stop();
  // Closes every session from the sandbox at `address` (its address is being released).
  // Thread-safe.
  void CloseFrom(const std::string& address);

  class Session;  // one proxied connection (sni_proxy.cc)

 private:
  void Accept();
  // Indexes a session by the sandbox address it comes from, for CloseFrom.
  void Track(const std::string& source, std::weak_ptr<Session> session);

  HostnameTable& table_;
  const HostAddressWatch& host_;
  const std::chrono::seconds idle_timeout_;
  boost::asio::ip::tcp::acceptor acceptor_;
  AcceptRetry accept_retry_;
  // Its slots may outlive the proxy inside a stopped io_context.
  ConnectionLimiter limiter_;
  OrgCounter owner_places_;
  OwnerOf owner_of_;
  boost::asio::thread_pool lookups_{1};
  std::mutex mu_;
  std::map<std::string, std::vector<std::weak_ptr<Session>>> by_source_;
  uint16_t port_ = 0;
};

}  // namespace adapt::net
