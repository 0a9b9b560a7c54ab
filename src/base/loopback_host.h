// Whether a host names this machine's loopback interface: the literal `localhost`, an IPv4
// address in 127.0.0.0/8, or ::1 (bracketed or not, IPv4-mapped loopback included). Parsed as
// an address, never matched as text: `127.evil.example` is a name anyone can point anywhere.
#pragma once

#include <string_view>

namespace adapt {

// `host` is a bare host without a port: "127.0.0.1", "[::1]", "::1", "localhost" (any case).
bool IsLoopbackHost(std::string_view host);

}  // namespace adapt
