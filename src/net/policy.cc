#include "net/policy.h"

#include "net/address.h"

namespace adapt::net {

Result<EgressPolicy> PolicyFor(const store::NetworkConfig& n, const std::string& default_dns) {
  EgressPolicy p;
  p.egress = n.egress;
  if (p.egress != "open" && p.egress != "allowlist")
    return InvalidArgument("network.egress", "egress '" + p.egress + "' has no network");
  for (const auto& r : n.allow) {
    auto ip = ParseIp(r.address);
    if (!ip) return InvalidArgument("network.allow", "a stored rule has no address");
    p.allow.push_back({r.protocol, ip->text, r.port});
  }
  if (n.dns) {
    p.dns = *n.dns;
  } else if (p.egress == "open" && !n.dns_disabled) {
    p.dns = default_dns;
  }
  for (const auto& h : n.hostnames) p.hostnames.push_back({h.hostname, h.port});
  if (!p.hostnames.empty()) {
    // Hostname rules: DNS only through the proxy, which asks the named resolver (all names)
    // or the default one (the listed names only).
    p.dns_all_names = n.dns.has_value();
    p.dns_upstream = n.dns ? *n.dns : default_dns;
    p.dns.clear();
  }
  return p;
}

}  // namespace adapt::net
