/* Preloaded into the tests' headless Chromium: its rtnetlink socket cannot be opened, so
 * Chromium assumes the network never changes. The e2e tests create and remove sandboxes'
 * veth interfaces all along (two shards side by side), and Chromium answers every such
 * change by failing the requests in flight with net::ERR_NETWORK_CHANGED, even those to
 * 127.0.0.1 (https://issues.chromium.org/issues/41465264). Nothing else changes: glibc's own
 * uses of netlink (getifaddrs) do not go through this symbol. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/netlink.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol) {
  static int (*real_socket)(int, int, int);
  if (domain == AF_NETLINK && protocol == NETLINK_ROUTE) {
    errno = EAFNOSUPPORT;
    return -1;
  }
  if (!real_socket) real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
  return real_socket(domain, type, protocol);
}
