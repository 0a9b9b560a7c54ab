// The key a client address is counted under by the per-address limits (registration,
// sign-in): the address itself for IPv4 (mapped into IPv6 or not), its /64 for IPv6, which a
// single host often holds whole.
#pragma once

#include <string>

namespace adapt::mcp {

std::string AddressKey(const std::string& address);

}  // namespace adapt::mcp
