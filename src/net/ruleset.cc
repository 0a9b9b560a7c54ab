#include "net/ruleset.h"

#include <set>

#include "base/hex.h"
#include "net/address.h"

namespace adapt::net {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string Family(const std::string& address) {
  return address.find(':') == std::string::npos ? "ip" : "ip6";
}

std::string Hex(const std::string& address) {
  auto ip = ParseIp(address);
  if (!ip || ip->v6) return "00000000";
  return HexEncode(ip->bytes.data(), 4);
}

std::string NatChain(const std::string& sandbox_id) { return "nat_" + sandbox_id; }

// The redirects of a sandbox with TLS hostname rules (see ruleset.h).
std::string HostnameRules(const RulesetScope& scope, const SandboxNet& sb) {
  const EgressPolicy& p = sb.policy;
  if (p.hostnames.empty() || !scope.dns_proxy_port || !scope.sni_proxy_port) return "";
  const std::string t = "inet " + scope.table;
  const std::string c = t + " " + NatChain(sb.sandbox_id);
  std::set<int> ports;
  for (const auto& h : p.hostnames) ports.insert(h.port);
  std::vector<std::string> port_list;
  for (int port : ports) port_list.push_back(std::to_string(port));
  std::string s;
  s += "add chain " + c + "\n";
  s += "add rule " + c + " ip daddr " + sb.host_address +
       " udp dport 53 redirect to :" + std::to_string(scope.dns_proxy_port) + "\n";
  // An IP rule grants access on its own: its destination is not proxied.
  for (const auto& r : p.allow)
    if (r.protocol == "tcp" && ports.count(r.port))
      s += "add rule " + c + " " + Family(r.address) + " daddr " + r.address + " tcp dport " +
           std::to_string(r.port) + " return\n";
  s += "add rule " + c + " meta nfproto ipv4 tcp dport { " + Join(port_list) +
       " } redirect to :" + std::to_string(scope.sni_proxy_port) + "\n";
  s += "add element " + t + " proxied { \"" + HostInterface(sb.address) + "\" . " + sb.address +
       " }\n";
  s += "add element " + t + " proxied_nat { \"" + HostInterface(sb.address) + "\" : jump " +
       NatChain(sb.sandbox_id) + " }\n";
  return s;
}

}  // namespace

std::string HostInterface(const std::string& a) { return "ad" + Hex(a); }
std::string NetnsName(const std::string& table, const std::string& sandbox_id) {
  return table + "-" + sandbox_id;
}

std::string FullRuleset(const RulesetScope& scope, const std::vector<SandboxNet>& sandboxes) {
  std::vector<std::string> blocked4 = BlockedIpv4Ranges();
  blocked4.push_back(scope.pool);
  const std::string t = "inet " + scope.table;
  const std::string& pool = scope.pool;
  std::string s;
  // "add" then "delete" makes the delete valid whether or not the table exists.
  s += "add table " + t + "\n";
  s += "delete table " + t + "\n";
  s += "add table " + t + "\n";
  s += "add set " + t + " blocked4 { type ipv4_addr; flags interval; auto-merge; elements = { " +
       Join(blocked4) + " }; }\n";
  s += "add set " + t + " blocked6 { type ipv6_addr; flags interval; auto-merge; elements = { " +
       Join(BlockedIpv6Ranges()) + " }; }\n";
  s += "add map " + t + " sandboxes { type ifname : verdict; }\n";
  s += "add set " + t + " ifs { type ifname; }\n";
  s += "add chain " + t + " from_sandbox\n";
  s += "add rule " + t + " from_sandbox iifname vmap @sandboxes\n";
  s += "add rule " + t + " from_sandbox drop\n";
  s += "add chain " + t + " forward { type filter hook forward priority filter; policy accept; }\n";
  s += "add rule " + t + " forward ip saddr " + pool + " jump from_sandbox\n";
  s += "add rule " + t + " forward ip daddr " + pool + " ct state established,related accept\n";
  s += "add rule " + t + " forward ip daddr " + pool + " drop\n";
  const std::string& pool6 = scope.pool6;
  if (!pool6.empty()) {
    s += "add rule " + t + " forward ip6 saddr " + pool6 + " jump from_sandbox\n";
    s += "add rule " + t + " forward ip6 daddr " + pool6 + " ct state established,related accept\n";
    s += "add rule " + t + " forward ip6 daddr " + pool6 + " drop\n";
  }
  // Anything else from a sandbox's interface (a source outside the pool) goes nowhere.
  s += "add rule " + t + " forward iifname @ifs drop\n";
  s += "add chain " + t + " input { type filter hook input priority filter; policy accept; }\n";
  // The host talking to itself through a pool address (its veth end) is not a sandbox.
  s += "add rule " + t + " input iifname \"lo\" accept\n";
  // IPv6 into the host from a sandbox interface: neighbour discovery and replies only.
  s += "add rule " + t +
       " input iifname @ifs icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept\n";
  s += "add rule " + t +
       " input iifname @ifs meta nfproto ipv6 ct state established,related accept\n";
  s += "add rule " + t + " input iifname @ifs meta nfproto ipv6 drop\n";
  s += "add rule " + t + " input ip saddr " + pool + " ct state established,related accept\n";
  if (scope.storage_port != 0)
    s += "add rule " + t + " input iifname @ifs ip saddr " + pool + " ip daddr " + pool +
         " tcp dport " + std::to_string(scope.storage_port) + " accept\n";
  if (scope.database_port != 0)
    s += "add rule " + t + " input iifname @ifs ip saddr " + pool + " ip daddr " + pool +
         " tcp dport " + std::to_string(scope.database_port) + " accept\n";
  // TLS hostname rules: a sandbox reaches the two proxies (after prerouting's redirect) from
  // its own interface and address only.
  s += "add set " + t + " proxied { type ifname . ipv4_addr; }\n";
  s += "add map " + t + " proxied_nat { type ifname : verdict; }\n";
  if (scope.dns_proxy_port && scope.sni_proxy_port) {
    s += "add rule " + t + " input iifname . ip saddr @proxied udp dport " +
         std::to_string(scope.dns_proxy_port) + " accept\n";
    s += "add rule " + t + " input iifname . ip saddr @proxied tcp dport " +
         std::to_string(scope.sni_proxy_port) +
         " accept\n";  // DNS over TCP to the gateway is refused at once (the DNS proxy never hands
                       // out a
    // truncated answer, so a resolver has no reason to try; see dns_proxy.h).
    s +=
        "add rule " + t + " input iifname . ip saddr @proxied tcp dport 53 reject with tcp reset\n";
  }
  s += "add rule " + t + " input ip saddr " + pool + " drop\n";
  // A sandbox is known by its interface too, whatever source address it forges.
  s += "add rule " + t + " input iifname @ifs drop\n";
  s += "add chain " + t +
       " postrouting { type nat hook postrouting priority srcnat; policy accept; }\n";
  s += "add rule " + t + " postrouting ip saddr " + pool + " ip daddr != " + pool + " masquerade\n";
  if (!pool6.empty())
    s += "add rule " + t + " postrouting ip6 saddr " + pool6 + " ip6 daddr != " + pool6 +
         " masquerade\n";
  s += "add chain " + t +
       " prerouting { type nat hook prerouting priority dstnat; policy accept; }\n";
  s += "add rule " + t + " prerouting iifname vmap @proxied_nat\n";
  for (const auto& sb : sandboxes) s += SandboxRules(scope, sb);
  return s;
}

std::string SandboxRules(const RulesetScope& scope, const SandboxNet& sb) {
  const std::string t = "inet " + scope.table;
  const std::string c = t + " " + sb.sandbox_id;
  const EgressPolicy& p = sb.policy;
  std::string s;
  s += "add chain " + c + "\n";
  s += "add rule " + c + " ct state established,related accept\n";
  if (!p.dns.empty()) {
    // The resolver's accept comes before the blocked ranges (the operator's default may be a
    // private one), so the pool is dropped first: with an operator's pool of public addresses,
    // a tenant's network.dns could name another sandbox.
    s += "add rule " + c + " ip daddr " + scope.pool + " drop\n";
    if (!scope.pool6.empty()) s += "add rule " + c + " ip6 daddr " + scope.pool6 + " drop\n";
    std::string f = Family(p.dns);
    s += "add rule " + c + " " + f + " daddr " + p.dns + " udp dport 53 accept\n";
    s += "add rule " + c + " " + f + " daddr " + p.dns + " tcp dport 53 accept\n";
  }
  s += "add rule " + c + " ip daddr @blocked4 drop\n";
  s += "add rule " + c + " ip6 daddr @blocked6 drop\n";
  if (p.egress == "open") {
    s += "add rule " + c + " accept\n";
  } else {
    for (const auto& r : p.allow)
      s += "add rule " + c + " " + Family(r.address) + " daddr " + r.address + " " + r.protocol +
           " dport " + std::to_string(r.port) + " accept\n";
    s += "add rule " + c + " drop\n";
  }
  s += "add element " + t + " sandboxes { \"" + HostInterface(sb.address) + "\" : jump " +
       sb.sandbox_id + " }\n";
  s += "add element " + t + " ifs { \"" + HostInterface(sb.address) + "\" }\n";
  s += HostnameRules(scope, sb);
  return s;
}

std::string RemoveSandboxRules(const RulesetScope& scope, const SandboxNet& sb) {
  const std::string t = "inet " + scope.table;
  std::string s;
  if (!sb.policy.hostnames.empty()) {
    s += "delete element " + t + " proxied_nat { \"" + HostInterface(sb.address) + "\" }\n";
    s += "delete element " + t + " proxied { \"" + HostInterface(sb.address) + "\" . " +
         sb.address + " }\n";
    s += "delete chain " + t + " " + NatChain(sb.sandbox_id) + "\n";
  }
  return s + "delete element " + t + " ifs { \"" + HostInterface(sb.address) + "\" }\n" +
         "delete element " + t + " sandboxes { \"" + HostInterface(sb.address) + "\" }\n" +
         "delete chain " + t + " " + sb.sandbox_id + "\n";
}

}  // namespace adapt::net
