#include "os/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "os/errno_status.h"

namespace adapt::os {
namespace {

Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    return InvalidArgument("path", "socket path too long: " + path);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Result<UniqueFd> ListenUnix(const std::string& path, int mode) {
  ASSIGN_OR_RETURN(sockaddr_un addr, Address(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoStatus("creating a socket for " + path);
  ::unlink(path.c_str());
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return ErrnoStatus("binding " + path);
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) return ErrnoStatus("chmod " + path);
  if (::listen(fd.get(), 16) != 0) return ErrnoStatus("listening on " + path);
  return fd;
}

Result<UniqueFd> AcceptUnix(int listen_fd) {
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return UniqueFd(fd);
    if (errno != EINTR) return ErrnoStatus("accepting a connection");
  }
}

Result<UniqueFd> ConnectUnix(const std::string& path) {
  ASSIGN_OR_RETURN(sockaddr_un addr, Address(path));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoStatus("creating a socket for " + path);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return ErrnoStatus("connecting to " + path);
  return fd;
}

void ShutdownSocket(int fd) { ::shutdown(fd, SHUT_RDWR); }

void ShutdownSocketWrite(int fd) { ::shutdown(fd, SHUT_WR); }

}  // namespace adapt::os
