// TCP keepalive on a connected socket: the kernel probes a silent peer and ends the connection
// when it stops answering, so that a proxied session whose client vanished (its sandbox gone)
// does not hold the server's side forever.
#pragma once

#include <chrono>

#include "base/status.h"

namespace adapt::os {

struct TcpKeepalive {
  std::chrono::seconds idle{60};      // silence before the first probe
  std::chrono::seconds interval{10};  // between unanswered probes
  int probes = 3;                     // unanswered probes that end the connection
};

// Turns keepalive on for the TCP socket `fd` with `settings`.
Status EnableTcpKeepalive(int fd, const TcpKeepalive& settings);

}  // namespace adapt::os
