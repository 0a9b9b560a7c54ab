#include "os/unix_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <string>

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
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..")
    return InvalidArgument("path", "not a socket path: " + path);
  // The socket is made through its directory's descriptor: a link put in place of the
  // directory, or of the socket, is never followed.
  UniqueFd dir_fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd) return ErrnoStatus("opening " + dir);
  ASSIGN_OR_RETURN(sockaddr_un addr,
                   Address("/proc/self/fd/" + std::to_string(dir_fd.get()) + "/" + name));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoStatus("creating a socket for " + path);
  // bind() creates the file with the socket's own mode (less the umask): set first, the
  // file never exists with a wider one.
  if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) return ErrnoStatus("chmod " + path);
  if (::unlinkat(dir_fd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
    return ErrnoStatus("removing the stale " + path);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return ErrnoStatus("binding " + path);
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
