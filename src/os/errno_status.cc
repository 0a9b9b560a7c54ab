#include "os/errno_status.h"

#include <cerrno>
#include <cstring>

namespace adapt::os {

Status ErrnoStatus(const std::string& what) { return ErrnoStatus(what, errno); }

// `what` names host paths and devices: a client is told the condition only (an internal
// failure's sentence comes from ClientMessage itself).
Status ErrnoStatus(const std::string& what, int err) {
  Status status(Code::kInternal, what + ": " + std::strerror(err));
  if (err == ENOENT)
    return Status(Code::kNotFound, status.message()).WithClientMessage("no such file or directory");
  if (err == ENOSPC)
    return Status(Code::kResourceExhausted, status.message())
        .WithClientMessage("the server's disk is full; retry once it has room");
  if (err == EMFILE || err == ENFILE)
    return Status(Code::kResourceExhausted, status.message())
        .WithClientMessage("the server has too many files open; retry shortly");
  if (err == ENOMEM)
    return Status(Code::kResourceExhausted, status.message())
        .WithClientMessage("the server is out of memory; retry shortly");
  return status;
}

}  // namespace adapt::os
