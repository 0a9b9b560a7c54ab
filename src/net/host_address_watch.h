// The host's own addresses, kept current: re-read whenever the kernel reports that an
// interface gained or lost an address (a netlink subscription), so that the TLS hostname
// proxy, which connects from the host, never lets a sandbox reach a service of the host
// through a listed name that resolves to one of them.
#pragma once

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <mutex>
#include <set>
#include <string>

#include "base/status.h"

namespace adapt::net {

class HostAddressWatch {
 public:
  explicit HostAddressWatch(boost::asio::io_context& io) : watch_(io) {}
  // Reads the addresses and starts listening for changes (on `io`'s threads).
  Status Start();
  void Stop();
  // Thread-safe. `address` in canonical text (ParseIp's).
  bool Contains(const std::string& address) const;

 private:
  void Reload();
  void Wait();

  boost::asio::posix::stream_descriptor watch_;
  mutable std::mutex mu_;
  std::set<std::string> addresses_;  // guarded by mu_
};

}  // namespace adapt::net
