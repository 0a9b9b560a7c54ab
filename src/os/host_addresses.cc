#include "os/host_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>

#include "os/errno_status.h"

namespace adapt::os {

Result<std::vector<std::string>> HostAddresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return ErrnoStatus("listing the host's addresses");
  std::vector<std::string> out;
  char buf[INET6_ADDRSTRLEN];
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    const void* bytes = nullptr;
    if (i->ifa_addr->sa_family == AF_INET)
      bytes = &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    else if (i->ifa_addr->sa_family == AF_INET6)
      bytes = &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr;
    if (bytes && ::inet_ntop(i->ifa_addr->sa_family, bytes, buf, sizeof buf)) out.emplace_back(buf);
  }
  ::freeifaddrs(list);
  return out;
}

Result<UniqueFd> WatchAddressChanges() {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE));
  if (!fd) return ErrnoStatus("opening a netlink socket");
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return ErrnoStatus("subscribing to address changes");
  return fd;
}

void DrainSocket(int fd) {
  std::array<char, 8192> buf;
  // ENOBUFS (the queue overflowed) also ends up here: the caller re-reads everything anyway.
  while (::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT) > 0) {
  }
}

}  // namespace adapt::os
