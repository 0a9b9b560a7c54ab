// RegistryDestinations: where a pull may connect. adaptd runs as root on the host, so a
// reference, a registry's redirect or a bearer challenge's token realm must not make it
// reach the host's own services or its private networks: connections to loopback,
// link-local, private, shared (CGNAT), unspecified, multicast and reserved addresses (and
// their IPv4-mapped or NAT64 IPv6 forms) are refused when they would be opened, unless the
// operator allowed that registry (--allow-registry HOST[:PORT]).
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::image {

// Why `address` (AF_INET or AF_INET6) is not a public address: "loopback", "link-local",
// "private", ...; empty when it is public.
std::string SpecialAddressKind(const sockaddr* address);

class RegistryDestinations {
 public:
  // Only public addresses.
  RegistryDestinations() = default;

  // Each entry "HOST" (every port) or "HOST:PORT"; an IPv6 address in brackets ("[::1]:5000").
  // HOST is a name or an address, compared with what a request names and with the address it
  // connects to. InvalidArgument naming the bad entry.
  static Result<RegistryDestinations> Parse(const std::vector<std::string>& allowed);

  // Whether a request to `host`:`port` (as its URL names them) may connect to `address`.
  // PermissionDenied with one sentence naming the destination and why otherwise.
  Status Check(const std::string& host, int port, const sockaddr* address) const;

 private:
  struct Entry {
    std::string host;  // lower case, IPv6 without brackets
    int port = 0;      // 0: every port
  };
  bool Allows(const std::string& host, int port) const;
  std::vector<Entry> allowed_;
};

}  // namespace adapt::image
