// Network namespaces and veth links, made with iproute2's `ip -batch` (a helper program, two
// runs per new sandbox: simpler than raw netlink).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace adapt::net {

struct LinkPlan {
  std::string netns;            // name under /run/netns
  std::string host_if;          // host end of the veth
  std::string host_address;     // x.x.x.1
  std::string sandbox_address;  // x.x.x.2
  // The IPv6 pair (a /126; see AddressPool6); empty: IPv4 only.
  std::string host_address6;
  std::string sandbox_address6;
};

std::string NetnsPath(const std::string& netns);
// Creates the namespace and the veth pair (its sandbox end made in the namespace as eth0),
// addresses both ends, routes the sandbox's traffic to the host end. Idempotent: an existing
// complete set-up is kept. True when it made them, false when they were there.
Result<bool> CreateLinks(const LinkPlan& plan);
// Puts the sandbox end's address, link state and default route back. runsc takes the
// interface's addresses and routes into its own network stack when it starts, so a sandbox
// started again in the same namespace (stop, then start) would otherwise find none. Only while
// no runsc uses the namespace.
Status ReaddressSandboxSide(const LinkPlan& plan);
// Removes the veth (both ends go together) and the namespace; absent pieces are fine.
Status RemoveLinks(const std::string& netns, const std::string& host_if);
bool LinkExists(const std::string& name);
// The host's IPv4 routes (main table) as (destination, device) pairs; "default" included.
Result<std::vector<std::pair<std::string, std::string>>> HostRoutes();
// Turns IPv4 forwarding on (the host routes sandbox traffic), and IPv6's when `ipv6`.
Status EnableForwarding(bool ipv6);

}  // namespace adapt::net
