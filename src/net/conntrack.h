// The host's connection tracking of a sandbox's addresses. The firewall accepts a flow's
// "established" packets before any of the sandbox's rules, so an entry kept alive from outside
// (a peer sending a datagram a minute) outlived the sandbox: the next sandbox given its
// address, another tenant's with a narrower egress policy, could send through the old flow.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::net {

// Deletes every tracked flow from or to `address` (IPv4) and `address6` (IPv6; "" for none),
// through conntrack(8). None there is no error. Call once the sandbox's rules and links are
// gone, so that no new flow of it can start.
Status ForgetConnections(const std::string& address, const std::string& address6);

}  // namespace adapt::net
