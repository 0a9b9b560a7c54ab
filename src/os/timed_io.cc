#include "os/timed_io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "os/errno_status.h"

namespace adapt::os {
namespace {

// Waits until `fd` has `events` or `deadline` passes; false then.
Result<bool> WaitFor(int fd, short events, Deadline deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return false;
    pollfd p{fd, events, 0};
    // Rounded up: a wait of 0 ms would spin until the deadline.
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 60000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("poll");
    if (n > 0) return true;
  }
}

Status Stalled(const char* what) {
  return Status(Code::kUnavailable, std::string("the other end stopped ") + what);
}

// One non-blocking write: -1 with errno set as write(2) does.
ssize_t WriteNow(int fd, std::string_view data) {
  ssize_t n = ::send(fd, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n >= 0 || errno != ENOTSOCK) return n;
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return -1;
  if (!(flags & O_NONBLOCK) && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return -1;
  n = ::write(fd, data.data(), data.size());
  int saved = errno;
  if (!(flags & O_NONBLOCK)) ::fcntl(fd, F_SETFL, flags);
  errno = saved;
  return n;
}

}  // namespace

Result<size_t> ReadSomeBefore(int fd, char* buffer, size_t capacity, Deadline deadline) {
  for (;;) {
    ASSIGN_OR_RETURN(bool readable, WaitFor(fd, POLLIN, deadline));
    if (!readable) return Stalled("sending");
    ssize_t n = ::read(fd, buffer, capacity);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return ErrnoStatus("read");
  }
}

Status WriteAllBefore(int fd, std::string_view data, Deadline deadline) {
  while (!data.empty()) {
    ASSIGN_OR_RETURN(bool writable, WaitFor(fd, POLLOUT, deadline));
    if (!writable) return Stalled("reading");
    ssize_t n = WriteNow(fd, data);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return ErrnoStatus("write");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace adapt::os
