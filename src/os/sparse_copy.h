// Copies of large sparse files (a sandbox's disk image) that keep their holes, and what such
// files take on disk.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace adapt::os {

enum class CopySync { kFsync, kNone };
// Copies regular file `from` to `to` (created or replaced, mode 0600), writing only its
// data extents so that holes stay holes; fsyncs `to` unless told kNone (a copy that is
// rebuilt from scratch after a crash anyway). Blocking (as long as the data is big).
// On failure `to` may be left partial: write to a temporary name and rename.
Status CopySparseFile(const std::string& from, const std::string& to,
                      CopySync sync = CopySync::kFsync);
// The bytes the regular files below `path` (or `path` itself) occupy on disk: allocated
// blocks, so a sparse file counts what it holds, not its apparent size. 0 when absent.
uint64_t AllocatedBytes(const std::string& path);
// Flushes `path` (a file or directory) to disk.
Status SyncPath(const std::string& path);

}  // namespace adapt::os
