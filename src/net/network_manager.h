// NetworkManager: a sandbox's network from creation to removal. Per sandbox: a /30 from the
// pool, a network namespace with the sandbox end of a veth pair (eth0), the host end
// (ad<hex address>) routed by the host, a resolv.conf naming its resolver, and its chain in
// nftables' `inet adapt` table (see ruleset.h). The attachment is recorded in the store
// before anything is made, so that Restore() can re-make or remove it after a crash.
// Thread-safe.
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/status.h"
#include "net/address.h"
#include "net/hostname_proxies.h"
#include "net/ruleset.h"
#include "store/network_store.h"

namespace adapt::net {

struct NetworkOptions {
  std::string pool = "10.88.0.0/16";  // IPv4 block the sandboxes' addresses come from
  std::string dns = "1.1.1.1";        // open mode's resolver unless the request names one
  std::string state_dir;              // resolv.conf files go under <state_dir>/net/<id>/
  // adapt's nftables table (inet) and the prefix of its network namespaces; distinct per
  // adaptd on one host (with a disjoint pool).
  std::string name = "adapt";
  uint16_t storage_port = 0;  // the storage gateway's port, reachable from sandboxes
  // The unique-local /96 the sandboxes' IPv6 addresses come from (AddressPool6); empty: no
  // IPv6 in sandboxes.
  std::string pool6 = "fd61:6461:7074::/96";
  // The TLS hostname proxy's connection limits (per client: per sandbox) and idle timeout.
  SniProxyLimits proxy_limits;
  uint16_t database_port = 0;  // the database proxy's port, reachable from sandboxes
};

struct Attachment {
  std::string netns_path;   // the namespace runsc joins
  std::string resolv_conf;  // file to bind-mount at /etc/resolv.conf
  std::string address;      // the sandbox's IPv4 address
  std::string address6;     // its IPv6 address; empty: none
};

class NetworkManager {
 public:
  NetworkManager(store::NetworkStore& store, NetworkOptions options);
  // Before Init: how the TLS hostname proxy learns a sandbox's organization, to hold each
  // organization's sessions to its share (SniProxy::OwnerOf).
  void set_owner_of(SniProxy::OwnerOf owner_of) { proxies_.set_owner_of(std::move(owner_of)); }
  // Checks the pool, turns on IPv4 forwarding and starts the TLS hostname proxies.
  Status Init();
  // Makes (or re-uses) the network of sandbox `id` under its `network` settings.
  Result<Attachment> Attach(const std::string& id, const store::NetworkConfig& network);
  // Replaces the egress policy (nftables chain) of sandbox `id`, whose network exists and may
  // be in use: a warm pool member claimed by a create. resolv.conf is left as it was booted.
  Status UpdatePolicy(const std::string& id, const store::NetworkConfig& network);
  // Removes everything of sandbox `id`'s network; idempotent.
  Status Detach(const std::string& id);
  // Start-up: rebuilds the table with the chains of `live` sandboxes (re-making their links
  // when missing) and removes every other recorded network and any adapt-named leftover.
  Status Restore(const std::set<std::string>& live);
  // The sandbox's address while it has a network.
  std::optional<std::string> AddressOf(const std::string& id);
  const NetworkOptions& options() const { return options_; }

 private:
  std::string ResolvConfPath(const std::string& id) const;
  Status RemoveRecorded(const store::NetworkRecord& record);
  RulesetScope Scope() const {
    RulesetScope scope{options_.name,         pool_ ? pool_->cidr() : options_.pool,
                       options_.storage_port, proxies_.dns_port(),
                       proxies_.sni_port(),   pool6_ ? pool6_->cidr() : ""};
    scope.database_port = options_.database_port;
    return scope;
  }
  // Tells the TLS hostname proxies about `sb` (or forgets it when it has no hostname rules).
  void Register(const SandboxNet& sb);

  store::NetworkStore& store_;
  NetworkOptions options_;
  std::optional<AddressPool> pool_;
  std::optional<AddressPool6> pool6_;
  HostnameProxies proxies_;
  std::mutex mu_;
};

}  // namespace adapt::net
