// Files and directories: durable writes are tmp + fsync + rename.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::os {

// Writes `data` to `path` atomically: readers see the old or the new content, never a mix.
// Through a temporary file of this call's own beside it (`<path>.<pid>-<n>.tmp`): two writers
// of one path (two organizations pulling one blob) each rename whole content into place.
Status WriteFileAtomic(const std::string& path, const std::string& data, int mode = 0644);
// Writes `data` into an existing file in place (a /proc/sys setting).
Status WriteExistingFile(const std::string& path, const std::string& data);
Result<std::string> ReadFile(const std::string& path);
Status MakeDirs(const std::string& path, int mode = 0755);
// Removes `path` and everything below it; does not cross into mounted filesystems.
Status RemoveTree(const std::string& path);
bool Exists(const std::string& path);
// The bytes of the regular files below `dir` (0 when it does not exist or cannot be read).
uint64_t TreeBytes(const std::string& dir);
// Names of the entries of `dir` (no "." or ".."), sorted; empty when it does not exist.
std::vector<std::string> ListDir(const std::string& dir);
// Creates a sparse file of `bytes` bytes.
Status CreateSparseFile(const std::string& path, uint64_t bytes);
// overlayfs's whiteout (a 0/0 character device) at `path`, replacing nothing.
Status MakeWhiteout(const std::string& path);
// Sets extended attribute `name` on `path` itself (not a symlink's target).
Status SetXattr(const std::string& path, const std::string& name, const std::string& value);
// Renames `from` to `to` (same filesystem); EEXIST/ENOTEMPTY when `to` is a non-empty directory.
Status Rename(const std::string& from, const std::string& to);
// Makes `to` a second name of the file `from` (same filesystem; EXDEV otherwise), replacing
// whatever `to` named in one step.
Status HardLinkReplacing(const std::string& from, const std::string& to);
// Whether `a` and `b` name the same file (device and inode); false when either is missing.
bool SameFile(const std::string& a, const std::string& b);

}  // namespace adapt::os
