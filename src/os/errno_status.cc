#include "os/errno_status.h"

#include <cerrno>
#include <cstring>

namespace adapt::os {

Status ErrnoStatus(const std::string& what) { return ErrnoStatus(what, errno); }

Status ErrnoStatus(const std::string& what, int err) {
  Code code = Code::kInternal;
  if (err == ENOENT) code = Code::kNotFound;
  if (err == ENOSPC || err == EMFILE || err == ENFILE || err == ENOMEM)
    code = Code::kResourceExhausted;
  return Status(code, what + ": " + std::strerror(err));
}

}  // namespace adapt::os
