#include "store/network_data_codec.h"

#include <nlohmann/json.hpp>

namespace adapt::store {

using nlohmann::json;

std::string EncodeNetworkData(const NetworkRecord& n) {
  json allow = json::array(), hostnames = json::array();
  for (const auto& a : n.policy.allow)
    allow.push_back({{"protocol", a.protocol}, {"address", a.address}, {"port", a.port}});
  for (const auto& h : n.policy.hostnames)
    hostnames.push_back({{"hostname", h.hostname}, {"port", h.port}});
  json data = {{"address", n.address},
               {"hostAddress", n.host_address},
               {"address6", n.address6},
               {"hostAddress6", n.host_address6},
               {"egress", n.policy.egress},
               {"dns", n.policy.dns},
               {"allow", allow},
               {"hostnames", hostnames},
               {"dnsUpstream", n.policy.dns_upstream},
               {"dnsAllNames", n.policy.dns_all_names}};
  return data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void DecodeNetworkData(const std::string& text, NetworkRecord& n) {
  json d = json::parse(text, nullptr, false);
  if (!d.is_object()) return;
  n.address = d.value("address", "");
  n.host_address = d.value("hostAddress", "");
  n.address6 = d.value("address6", "");
  n.host_address6 = d.value("hostAddress6", "");
  NetworkPolicyRecord& p = n.policy;
  p.egress = d.value("egress", "open");
  p.dns = d.value("dns", "");
  if (d.contains("allow") && d["allow"].is_array())
    for (const auto& a : d["allow"])
      if (a.is_object())
        p.allow.push_back({a.value("protocol", "tcp"), a.value("address", ""), a.value("port", 0)});
  if (d.contains("hostnames") && d["hostnames"].is_array())
    for (const auto& h : d["hostnames"])
      if (h.is_object()) p.hostnames.push_back({h.value("hostname", ""), h.value("port", 0)});
  p.dns_upstream = d.value("dnsUpstream", "");
  p.dns_all_names = d.value("dnsAllNames", false);
}

}  // namespace adapt::store
