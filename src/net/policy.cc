#include "net/policy.h"

#include "net/address.h"

namespace adapt::net {

Result<EgressPolicy> PolicyFromJson(const nlohmann::json& n, const std::string& default_dns) {
  EgressPolicy p;
  if (!n.is_object()) return InvalidArgument("network", "the stored network is not an object");
  p.egress = n.value("egress", "open");
  if (p.egress != "open" && p.egress != "allowlist")
    return InvalidArgument("network.egress", "egress '" + p.egress + "' has no network");
  if (n.contains("allow") && n["allow"].is_array()) {
    for (const auto& r : n["allow"]) {
      auto ip = ParseIp(r.value("address", ""));
      if (!ip) return InvalidArgument("network.allow", "a stored rule has no address");
      p.allow.push_back({r.value("protocol", "tcp"), ip->text, r.value("port", 0)});
    }
  }
  bool has_dns = n.contains("dns") && n["dns"].is_string();
  if (has_dns) {
    p.dns = n["dns"];
  } else if (p.egress == "open") {
    p.dns = default_dns;
  }
  if (n.contains("hostnames") && n["hostnames"].is_array()) {
    for (const auto& h : n["hostnames"])
      p.hostnames.push_back({h.value("hostname", ""), h.value("port", 0)});
  }
  if (!p.hostnames.empty()) {
    // Hostname rules: DNS only through the proxy, which asks the named resolver (all names)
    // or the default one (the listed names only).
    p.dns_all_names = has_dns;
    p.dns_upstream = has_dns ? p.dns : default_dns;
    p.dns.clear();
  }
  return p;
}

}  // namespace adapt::net
