// RLIMIT_NOFILE: every connection, sandbox disk and agent socket of adaptd is a descriptor,
// and the usual soft limit (1024) is reached by a few hundred idle connections.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace adapt::os {

struct OpenFileLimit {
  uint64_t soft = 0;
  uint64_t hard = 0;
};

// Raises the hard limit to `wanted` when allowed (root; never above the kernel's
// fs.nr_open), then the soft limit to the hard one. Returns the limits now in force; an error
// only when they cannot be read.
Result<OpenFileLimit> RaiseOpenFileLimit(uint64_t wanted);

}  // namespace adapt::os
