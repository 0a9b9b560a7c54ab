// ProcessLock: an exclusive lock on a file that belongs to this process alone. A POSIX record
// lock (fcntl F_SETLK) is not inherited across fork and ends when the process ends, so a child
// caught between fork and exec when adaptd dies cannot keep the next adaptd out (flock's
// lock belongs to the open file, which that child shares until it closes its descriptors).
#pragma once

#include <string>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

// Creates `path` (0600) if needed and locks it for this process. kUnavailable when another
// process holds it. The lock lasts while the returned descriptor is open; no other descriptor
// of the same file may be opened and closed by this process meanwhile (POSIX drops the lock).
Result<UniqueFd> LockFileForProcess(const std::string& path);

// Replaces the contents of a file locked by LockFileForProcess through its descriptor (opening
// the file again and closing it would drop the lock).
Status RewriteLockedFile(const UniqueFd& fd, const std::string& text);

// Whether another process holds LockFileForProcess's lock on `path` now (false when the file
// is missing or unlocked). Opens and closes `path`: not for a file this process has locked.
Result<bool> LockedByAnotherProcess(const std::string& path);

}  // namespace adapt::os
