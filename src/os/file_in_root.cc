#include "os/file_in_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/errno_status.h"
#include "os/unique_fd.h"

namespace adapt::os {

Result<std::string> ReadFileInRoot(const std::string& root, const std::string& path,
                                   size_t max_bytes) {
  UniqueFd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return ErrnoStatus("opening " + root);
  open_how how{};
  // O_NONBLOCK: a FIFO planted at `path` must not hold the open up.
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  std::string where = root + " (in root) " + path;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir.get(), path.c_str(), &how, sizeof how)));
  if (!fd) return ErrnoStatus("opening " + where);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("stat " + where);
  if (!S_ISREG(st.st_mode)) return Internal(where + " is not a regular file");
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("reading " + where);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes)
      return Internal(where + " is larger than " + std::to_string(max_bytes) + " bytes");
  }
  return out;
}

}  // namespace adapt::os
