#include "os/open_file_limit.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>

#include "os/errno_status.h"
#include "os/files.h"

namespace adapt::os {

Result<OpenFileLimit> RaiseOpenFileLimit(uint64_t wanted) {
  rlimit now{};
  if (::getrlimit(RLIMIT_NOFILE, &now) != 0) return ErrnoStatus("reading RLIMIT_NOFILE");
  // setrlimit refuses a hard limit above fs.nr_open with EPERM, even for root.
  if (auto nr_open = ReadFile("/proc/sys/fs/nr_open"); nr_open.ok())
    wanted = std::min<uint64_t>(wanted, std::strtoull(nr_open->c_str(), nullptr, 10));
  if (now.rlim_max != RLIM_INFINITY && now.rlim_max < wanted) {
    rlimit raised{static_cast<rlim_t>(wanted), static_cast<rlim_t>(wanted)};
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) now = raised;  // else: not root, keep hard
  }
  if (now.rlim_cur != now.rlim_max) {
    rlimit soft{now.rlim_max, now.rlim_max};
    if (::setrlimit(RLIMIT_NOFILE, &soft) == 0) now = soft;
  }
  return OpenFileLimit{now.rlim_cur, now.rlim_max};
}

}  // namespace adapt::os
