// The one place where errno becomes a Status.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::os {

// Status for a failed system call: "what: strerror(errno)". Reads errno now.
Status ErrnoStatus(const std::string& what);
Status ErrnoStatus(const std::string& what, int err);

}  // namespace adapt::os
