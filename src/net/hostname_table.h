// What the TLS hostname proxies know about each sandbox that has hostname rules: its rules,
// its resolver, and the addresses its DNS proxy answered for each listed name (a TLS
// connection may only go to one of those). Keyed by the sandbox's IPv4 address, which the
// firewall ties to the sandbox's interface. Thread-safe; in memory only (after an adaptd
// restart a sandbox resolves again before it connects).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "net/address.h"
#include "net/dns_message.h"
#include "net/policy.h"

namespace adapt::net {

struct ProxiedSandbox {
  std::string sandbox_id;
  std::string address;  // the sandbox's IPv4 address
  std::vector<HostnameRule> rules;
  std::string upstream;    // the resolver the DNS proxy asks
  bool all_names = false;  // network.dns was set: names outside the rules resolve too
};

// Recorded answers are kept at least this long (clients cache past short TTLs), and at most
// this many addresses per name.
inline constexpr int64_t kMinAnswerMillis = 15 * 60 * 1000;
inline constexpr size_t kMaxAddressesPerName = 32;

class HostnameTable {
 public:
  // The sandboxes' address pool: never a destination, even outside the blocked ranges (an
  // operator's pool of public addresses), so that a tenant's DNS name cannot point the proxy
  // at another tenant's sandbox.
  void SetSandboxPool(AddressPool pool);
  // Whether `address` (IPv4 text) is inside the sandboxes' pool.
  bool InSandboxPool(const std::string& address) const;
  void Put(ProxiedSandbox sandbox);
  void Remove(const std::string& address);
  std::optional<ProxiedSandbox> Find(const std::string& address) const;
  // Whether `name` is listed (for any port) for the sandbox at `address`.
  bool Lists(const std::string& address, const std::string& name) const;
  void Record(const std::string& address, const std::string& name,
              const std::vector<DnsAddress>& answers, int64_t now_ms);
  // Empty when the sandbox at `source` may open TLS with server name `sni` to
  // `destination`:`port`; otherwise why not, as a sentence fragment.
  std::string Check(const std::string& source, const std::string& sni,
                    const std::string& destination, int port, int64_t now_ms) const;

 private:
  struct Entry {
    ProxiedSandbox sandbox;
    std::map<std::string, std::map<std::string, int64_t>> answers;  // name -> ip -> expiry
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> by_address_;
  std::optional<AddressPool> pool_;
};

}  // namespace adapt::net
