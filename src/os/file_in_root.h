// Reading a file of, or making a directory in, an untrusted tree (an image's root filesystem or
// layer) from the host. Every component of the path, symlinks included, resolves inside `root` as
// if `root` were
// "/" (openat2 RESOLVE_IN_ROOT): an image's "etc/passwd -> /etc/shadow" names the image's
// own etc/shadow, never the host's, and "../" stops at `root`. Only a regular file is read
// (a FIFO, device or directory is refused without blocking), and at most `max_bytes` of it.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

// The regular file `path` names inside `root` (a leading '/' allowed), open for reading.
// NotFound when it does not resolve to anything inside `root`; InvalidArgument when it is not
// a regular file. Thread-safe.
Result<UniqueFd> OpenRegularFileInRoot(const std::string& root, const std::string& path);

// The content of `path` (relative to `root`, a leading '/' allowed). NotFound when it does
// not resolve to anything inside `root`; InvalidArgument when it is not a regular file;
// PayloadTooLarge when it is larger than `max_bytes`. Thread-safe.
Result<std::string> ReadFileInRoot(const std::string& root, const std::string& path,
                                   size_t max_bytes);

// Whether `path` resolves inside `root` to a regular file.
bool RegularFileInRoot(const std::string& root, const std::string& path);

// Whether `path` resolves inside `root` to something that is not a directory (a working
// directory that cannot be one).
bool NonDirectoryInRoot(const std::string& root, const std::string& path);

// Whether `path` is a directory inside `root` reached through directories only (no component
// is a symbolic link), so that the host path root + path names that very directory (a bind
// mount's source).
bool PlainDirectoryInRoot(const std::string& root, const std::string& path);

// Makes directory `path` (relative to `root`) and its missing parents, like mkdir -p, each
// step resolved inside `root` as above and created with mkdirat in the directory that step
// resolved to: an image's "workspace -> /etc/x" never makes anything outside `root`. A
// component that exists but is no directory (a dangling link included) is an error naming
// it. Directories it creates get `mode`. Thread-safe.
Status MakeDirsInRoot(const std::string& root, const std::string& path, int mode);

}  // namespace adapt::os
