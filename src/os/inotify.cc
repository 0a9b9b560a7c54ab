#include "os/inotify.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "os/errno_status.h"

namespace adapt::os {

Result<Inotify> Inotify::Open() {
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return ErrnoStatus("inotify_init1");
  return Inotify(UniqueFd(fd));
}

Result<int> Inotify::WatchRenamesInto(const std::string& dir) {
  int wd = ::inotify_add_watch(fd_.get(), dir.c_str(), IN_MOVED_TO | IN_ONLYDIR);
  if (wd < 0) return ErrnoStatus("watching " + dir);
  return wd;
}

void Inotify::Remove(int watch) { ::inotify_rm_watch(fd_.get(), watch); }

Result<std::vector<InotifyEvent>> Inotify::Read(int timeout_ms) {
  std::vector<InotifyEvent> events;
  pollfd p{fd_.get(), POLLIN, 0};
  int ready = ::poll(&p, 1, timeout_ms);
  if (ready < 0 && errno != EINTR) return ErrnoStatus("waiting for inotify events");
  if (ready <= 0) return events;
  alignas(inotify_event) char buffer[16 * 1024];
  for (;;) {
    ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n < 0) return ErrnoStatus("reading inotify events");
    for (ssize_t at = 0; at < n;) {
      inotify_event ev;
      std::memcpy(&ev, buffer + at, sizeof ev);
      InotifyEvent out;
      out.watch = ev.wd;
      if (ev.len > 0)
        out.name = std::string(buffer + at + sizeof ev, ::strnlen(buffer + at + sizeof ev, ev.len));
      out.gone = (ev.mask & IN_IGNORED) != 0;
      events.push_back(std::move(out));
      at += static_cast<ssize_t>(sizeof ev + ev.len);
    }
  }
  return events;
}

}  // namespace adapt::os
