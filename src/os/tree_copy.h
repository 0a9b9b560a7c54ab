// Copying a directory tree exactly as it is: an overlay upper directory becoming an image
// layer keeps its whiteouts (0/0 character devices), opaque-directory xattrs, owners, modes,
// hard links and symlinks (copied as links, never followed).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace adapt::os {

// Copies `from` to `to`, which must not exist yet. On failure `to` may hold part of the copy
// (the caller copies into a temporary directory it removes). Blocking.
Status CopyTreeExactly(const std::string& from, const std::string& to);

// The bytes of the regular files below `dir`, symlinks not followed (a tenant's link to a
// large host file counts as a link).
uint64_t TreeBytesNoFollow(const std::string& dir);

}  // namespace adapt::os
