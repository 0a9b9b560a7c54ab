// Reading a file of a tree that someone else controls (an image, a sandbox's rootfs) from the
// host: its symlinks and ".." resolve inside the tree, never to the host's files.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace adapt::os {

// The content of `path` (absolute within `root`) resolved as if `root` were "/" (openat2's
// RESOLVE_IN_ROOT), without crossing into another mount. NotFound when absent; an error when
// it is not a regular file or holds more than `max_bytes`.
Result<std::string> ReadFileInRoot(const std::string& root, const std::string& path,
                                   size_t max_bytes);

}  // namespace adapt::os
