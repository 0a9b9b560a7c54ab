// A sandbox's egress policy as the firewall applies it, made from the sandbox's network as
// created (store::NetworkConfig; core/sandbox_request.cc validates it).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "store/sandbox_config.h"

namespace adapt::net {

struct AllowRule {
  std::string protocol;  // "tcp" or "udp"
  std::string address;   // canonical literal IPv4 or IPv6
  int port = 0;
};

struct HostnameRule {
  std::string hostname;  // exact, lower case
  int port = 0;
};

struct EgressPolicy {
  std::string egress = "open";  // "open", "allowlist" ("none" never reaches net/)
  std::vector<AllowRule> allow;
  std::string dns;  // the resolver the sandbox may query directly; empty: none
  // TLS hostname rules: the sandbox's DNS goes only to adapt's DNS proxy (on its gateway),
  // which asks `dns_upstream`; TCP to the rules' ports goes through the SNI proxy.
  std::vector<HostnameRule> hostnames;
  std::string dns_upstream;
  bool dns_all_names = false;  // network.dns was set too: every name resolves (seed 001)
};

// `default_dns` fills open mode's resolver when the create named none. Egress "none" has no
// network, so no policy: InvalidArgument.
Result<EgressPolicy> PolicyFor(const store::NetworkConfig& network, const std::string& default_dns);

}  // namespace adapt::net
