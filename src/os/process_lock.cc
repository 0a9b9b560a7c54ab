#include "os/process_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

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

Status RewriteLockedFile(const UniqueFd& fd, const std::string& text) {
  if (::ftruncate(fd.get(), 0) != 0) return ErrnoStatus("emptying a locked file");
  if (::pwrite(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return ErrnoStatus("writing a locked file");
  return Status::Ok();
}

Result<bool> LockedByAnotherProcess(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return false;
    return ErrnoStatus("opening " + path);
  }
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(fd.get(), F_GETLK, &whole) != 0) return ErrnoStatus("reading the lock of " + path);
  return whole.l_type != F_UNLCK;
}

}  // namespace adapt::os
