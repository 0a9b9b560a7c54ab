// The one place where errno becomes a Status.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::os {

// Status for a failed system call: "what: strerror(errno)". Reads errno now. ENOENT is
// NotFound; ENOSPC, EMFILE, ENFILE and ENOMEM are ResourceExhausted; each of those carries a
// client sentence that names the condition, not `what`'s paths (Status::client_message).
// Any other errno is Internal.
Status ErrnoStatus(const std::string& what);
Status ErrnoStatus(const std::string& what, int err);

}  // namespace adapt::os
