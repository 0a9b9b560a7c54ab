#include "net/network_claim.h"

#include "os/files.h"
#include "os/process_lock.h"
#include "os/unique_fd.h"

namespace adapt::net {
namespace {

constexpr const char* kChoose =
    "; give this adaptd a --network-name and a --network-pool of its own";

}  // namespace

Result<NetworkClaim> NetworkClaim::Take(const std::string& dir, const std::string& name,
                                        const AddressPool& pool) {
  RETURN_IF_ERROR(os::MakeDirs(dir, 0700));
  const std::string path = dir + "/" + name;
  auto lock = os::LockFileForProcess(path);
  if (!lock.ok() && lock.status().code() == Code::kUnavailable)
    return Status(Code::kConflict, "another adaptd on this host uses the network name '" + name +
                                       "' (nftables table inet " + name + ")" + kChoose);
  if (!lock.ok()) return lock.status();
  RETURN_IF_ERROR(os::RewriteLockedFile(*lock, pool.cidr() + "\n").WithContext(path));
  for (const auto& other : os::ListDir(dir)) {
    if (other == name) continue;
    const std::string other_path = dir + "/" + other;
    auto running = os::LockedByAnotherProcess(other_path);
    if (!running.ok() || !*running) continue;
    auto claimed = os::ReadFile(other_path);
    if (!claimed.ok()) continue;
    std::string cidr = *claimed;
    while (!cidr.empty() && (cidr.back() == '\n' || cidr.back() == ' ')) cidr.pop_back();
    if (pool.Overlaps(cidr))
      return Status(Code::kConflict, "the network pool " + pool.cidr() + " overlaps " + cidr +
                                         " of the adaptd running with --network-name " + other +
                                         kChoose);
  }
  return NetworkClaim(std::make_unique<os::UniqueFd>(std::move(*lock)));
}

NetworkClaim::NetworkClaim(std::unique_ptr<os::UniqueFd> lock) : lock_(std::move(lock)) {}
NetworkClaim::NetworkClaim(NetworkClaim&&) noexcept = default;
NetworkClaim& NetworkClaim::operator=(NetworkClaim&&) noexcept = default;
NetworkClaim::~NetworkClaim() = default;

}  // namespace adapt::net
