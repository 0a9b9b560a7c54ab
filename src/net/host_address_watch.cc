#include "net/host_address_watch.h"

#include "base/log.h"
#include "os/host_addresses.h"

namespace adapt::net {

Status HostAddressWatch::Start() {
  // Subscribed before the first read, so that no change falls between the two.
  ASSIGN_OR_RETURN(os::UniqueFd fd, os::WatchAddressChanges());
  watch_.assign(fd.release());
  ASSIGN_OR_RETURN(auto addresses, os::HostAddresses());
  {
    std::lock_guard lock(mu_);
    addresses_ = {addresses.begin(), addresses.end()};
  }
  Wait();
  return Status::Ok();
}

void HostAddressWatch::Stop() {
  boost::system::error_code ignored;
  watch_.close(ignored);
}

bool HostAddressWatch::Contains(const std::string& address) const {
  std::lock_guard lock(mu_);
  return addresses_.count(address) > 0;
}

void HostAddressWatch::Reload() {
  auto addresses = os::HostAddresses();
  if (!addresses.ok()) {
    // Keep the last list: better stale than empty.
    spdlog::warn("re-reading the host's addresses: {}", addresses.status().message());
    return;
  }
  std::lock_guard lock(mu_);
  addresses_ = {addresses->begin(), addresses->end()};
}

void HostAddressWatch::Wait() {
  watch_.async_wait(boost::asio::posix::stream_descriptor::wait_read, [this](auto ec) {
    if (ec || !watch_.is_open()) return;
    // The messages themselves do not matter: any change means reading the list again.
    os::DrainSocket(watch_.native_handle());
    Reload();
    Wait();
  });
}

}  // namespace adapt::net
