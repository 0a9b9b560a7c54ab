// Unix stream sockets: the host end of the in-sandbox agent's channel.
#pragma once

#include <string>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

// Binds and listens at `path` (a stale socket file there is replaced), the file created
// with mode `mode` (less the umask) from the start; no link at `path` or in place of its
// directory is followed. The fd is close-on-exec and blocking.
Result<UniqueFd> ListenUnix(const std::string& path, int mode);
// Accepts one connection on a listening socket; the connection is close-on-exec.
Result<UniqueFd> AcceptUnix(int listen_fd);
// Connects to the socket at `path` (for tests and tools).
Result<UniqueFd> ConnectUnix(const std::string& path);
// Wakes every thread blocked on `fd` (reads see end of file); the fd stays open.
void ShutdownSocket(int fd);
// Ends the sending side only: the peer reads end of file, replies can still arrive.
void ShutdownSocketWrite(int fd);

}  // namespace adapt::os
