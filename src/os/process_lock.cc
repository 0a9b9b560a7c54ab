#include "os/process_lock.h"

#include <fcntl.h>

#include "os/errno_status.h"

namespace adapt::os {

Result<UniqueFd> LockFileForProcess(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) return ErrnoStatus("opening " + path);
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(fd.get(), F_SETLK, &whole) == 0) return fd;
  if (errno == EACCES || errno == EAGAIN)
    return Status(Code::kUnavailable, path + " is locked by another process");
  return ErrnoStatus("locking " + path);
}

}  // namespace adapt::os
