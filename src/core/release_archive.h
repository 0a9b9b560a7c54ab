// The checks a deployed app's release passes before it is kept: the zstd-compressed tar of
// source_path may hold nothing that would land outside the directory it is extracted into,
// nor unpack to more than a limit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace adapt::core {

// Reads the whole stored release from `read` (up to n bytes per call; 0 at the end, -1 on
// error): zstd, or a plain tar from a store older than compressed releases. Returns why it
// is unsafe: its first entry with an absolute name or one with "..", a symlink pointing
// outside the root (absolute, or climbing out with ".."), a hard link to a name outside it,
// a device or FIFO; more than `max_unpacked` bytes once decompressed; a malformed archive or
// frame. "" when it is safe to unpack.
std::string FirstEscapingEntry(const std::function<long(char*, size_t)>& read,
                               uint64_t max_unpacked);

}  // namespace adapt::core
