// The nftables text adapt loads: one table, `inet adapt`, and nothing outside it.
//
// Everything is keyed on the pool, so that two adaptds with disjoint pools and tables (the
// e2e tests run several) never act on each other's sandboxes.
//   forward:      traffic from the pool jumps through the `sandboxes` verdict map (keyed by
//                 the sandbox's host interface, so a spoofed source misses) to the sandbox's
//                 own chain; anything else from the pool is dropped; traffic to the pool is
//                 accepted only as a reply.
//   input:        a sandbox reaches nothing on the host (its addresses, adaptd's ports)
//                 except replies to connections the host opened (endpoints). Keyed on the
//                 sandbox interfaces (set `ifs`) as well as on the pool, so that a forged
//                 source outside the pool, or a link-local IPv6 address (fe80::, which every
//                 veth end has), reaches nothing either; only neighbour discovery passes.
//   IPv6:         the same through the pool's IPv6 block (`pool6`): forward to the sandbox's
//                 chain, whose blocked6 set holds fc00::/7 (so other sandboxes' and the
//                 host's unique-local addresses), masquerade out.
//   postrouting:  the pool is masqueraded behind the host's outgoing address.
//   prerouting:   sandboxes with TLS hostname rules (`proxied_nat` map, keyed by interface)
//                 jump to "nat_<sandbox id>": UDP 53 to their gateway goes to the DNS proxy,
//                 TCP to their rules' ports (except destinations an IP rule allows) to the
//                 SNI proxy; `input` accepts exactly that from the `proxied` interface+address,
//                 and resets their TCP to port 53 (no DNS over TCP, see dns_proxy.h).
//   <sandbox id>: the sandbox's policy: replies, its resolver, the blocked ranges (which
//                 include the pool, so other sandboxes), then open's accept or the allowlist.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/policy.h"

namespace adapt::net {

// Which table, and which pool, one adaptd owns.
struct RulesetScope {
  std::string table = "adapt";
  std::string pool = "10.88.0.0/16";
  // The storage gateway's TCP port on the host (0: none): the one host port sandboxes reach,
  // and only at a pool address (their veth's host end), whatever their egress policy.
  uint16_t storage_port = 0;
  // The TLS hostname proxies' ports on the host (HostnameProxies); 0: not running.
  uint16_t dns_proxy_port = 0;
  uint16_t sni_proxy_port = 0;
  // The IPv6 block of the pool (AddressPool6::cidr()); empty: sandboxes have no IPv6.
  std::string pool6;
  // The database proxy's TCP port (DatabaseProxy; 0: none): reachable the same way. The
  // proxy itself decides which sandbox may open which database.
  uint16_t database_port = 0;
};

struct SandboxNet {
  std::string sandbox_id;
  int64_t slot = 0;
  std::string address;       // the sandbox's IPv4 address
  std::string host_address;  // the host end of its veth
  EgressPolicy policy;
  std::string address6;       // its IPv6 address (empty: none)
  std::string host_address6;  // the IPv6 address of the host end
};

// The host end's name comes from the sandbox's address ("ad" and its 8 hex digits), so it is
// unique on the host whenever pools are disjoint. The sandbox end is eth0 in its namespace.
std::string HostInterface(const std::string& sandbox_address);
// "<table>-<sandbox id>" under /run/netns.
std::string NetnsName(const std::string& table, const std::string& sandbox_id);

// Replaces the whole table (atomically, in one transaction): the base chains and sets, then
// `sandboxes`' chains.
std::string FullRuleset(const RulesetScope& scope, const std::vector<SandboxNet>& sandboxes);
// Adds one sandbox's chain and its map entry.
std::string SandboxRules(const RulesetScope& scope, const SandboxNet& sandbox);
// Removes them (the map entry first: the chain cannot go while referenced).
std::string RemoveSandboxRules(const RulesetScope& scope, const SandboxNet& sandbox);

}  // namespace adapt::net
