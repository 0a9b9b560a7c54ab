// The host's own IP addresses (every interface's), and a way to hear when they change.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

// Every IPv4 and IPv6 address of the host's interfaces, canonical text ("10.0.0.1", "fe80::1"),
// without a zone.
Result<std::vector<std::string>> HostAddresses();

// A non-blocking, close-on-exec netlink socket that becomes readable whenever an address is
// added to or removed from an interface (RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR).
Result<UniqueFd> WatchAddressChanges();

// Reads and drops whatever is queued on the non-blocking `fd`.
void DrainSocket(int fd);

}  // namespace adapt::os
