// NetworkClaim: this adaptd's hold on its network name and IPv4 pool among the adaptds of the
// host. Two adaptds with one name replace each other's nftables table (and so the egress rules
// of each other's sandboxes); two with overlapping pools give two sandboxes one address. Each
// running adaptd holds a lock on <dir>/<name> that names its pool; a file nobody holds is a
// stopped adaptd's and does not count.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "net/address.h"

namespace adapt::os {
class UniqueFd;
}

namespace adapt::net {

// The directory of the claims: on tmpfs, so a reboot forgets them with their tables.
inline constexpr const char* kNetworkClaimsDir = "/run/adapt/networks";

class NetworkClaim {
 public:
  // Claims `name` and `pool`; kConflict naming the other adaptd's name or pool (and
  // the flags that choose others) when a running adaptd holds either.
  static Result<NetworkClaim> Take(const std::string& dir, const std::string& name,
                                   const AddressPool& pool);

  NetworkClaim(NetworkClaim&&) noexcept;
  NetworkClaim& operator=(NetworkClaim&&) noexcept;
  ~NetworkClaim();

 private:
  explicit NetworkClaim(std::unique_ptr<os::UniqueFd> lock);
  std::unique_ptr<os::UniqueFd> lock_;  // held for the daemon's life
};

}  // namespace adapt::net
