// The DNS proxy and the SNI proxy of TLS hostname rules, on one I/O thread of their own,
// with the HostnameTable they share. NetworkManager owns one and keeps the table in step
// with the sandboxes; nftables sends the sandboxes' traffic to the two ports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "net/hostname_table.h"
#include "net/sni_proxy.h"

namespace adapt::net {

class HostnameProxies {
 public:
  explicit HostnameProxies(SniProxyLimits limits = {});
  ~HostnameProxies();
  // Binds both proxies to free ports (0.0.0.0; they answer only sandboxes in the table),
  // reads the host's addresses and starts their thread.
  Status Start();
  void Stop();
  // Before Start: how the SNI proxy learns a sandbox's organization (SniProxy::OwnerOf).
  void set_owner_of(SniProxy::OwnerOf owner_of);
  // The sandbox at `address` is gone (or has no hostname rules any more): its table entry
  // goes and its proxied sessions are closed, so that the address's next holder inherits
  // neither.
  void Forget(const std::string& address);
  uint16_t dns_port() const;
  uint16_t sni_port() const;
  HostnameTable& table();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adapt::net
