#include "os/tcp_keepalive.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "os/errno_status.h"

namespace adapt::os {

Status EnableTcpKeepalive(int fd, const TcpKeepalive& settings) {
  const int on = 1;
  const int idle = static_cast<int>(settings.idle.count());
  const int interval = static_cast<int>(settings.interval.count());
  const int probes = settings.probes;
  if (::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) != 0)
    return ErrnoStatus("turning TCP keepalive on");
  if (::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) != 0 ||
      ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval) != 0 ||
      ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) != 0)
    return ErrnoStatus("setting the TCP keepalive timings");
  return Status::Ok();
}

}  // namespace adapt::os
