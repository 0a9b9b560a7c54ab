#include "os/errno_status.h"

#include <cerrno>
#include <cstring>

namespace adapt::os {

Status ErrnoStatus(const std::string& what) { return ErrnoStatus(what, errno); }

// `what` names host paths and devices: a client is told the condition only (an internal
// failure's sentence comes from ClientMessage itself).
Status ErrnoStatus(const std::string& what, int err) {
  std::string message = what + ": " + std::strerror(err);
  auto exhausted = [&](const char* sentence) {
    return Status(Code::kResourceExhausted, message).WithClientMessage(sentence);
  };
  if (err == ENOENT)
    return Status(Code::kNotFound, message).WithClientMessage("no such file or directory");
  if (err == ENOSPC) return exhausted("the server's disk is full; retry once it has room");
  if (err == EMFILE || err == ENFILE)
    return exhausted("the server has too many files open; retry shortly");
  if (err == ENOMEM) return exhausted("the server is out of memory; retry shortly");
  return Status(Code::kInternal, message);
}

}  // namespace adapt::os
