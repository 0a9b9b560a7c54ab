// Mounts: overlay root filesystems, loop-backed ext4 disks, and finding what is mounted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::os {

// Mounts an overlay at `target` with `lower` read-only and `upper`/`work` writable.
Status MountOverlay(const std::string& lower, const std::string& upper, const std::string& work,
                    const std::string& target);

// Makes a sparse ext4 image of `mib` MiB at `path` (through path.new, so a crash leaves no
// half-formatted image at `path`). `encrypt`: with the fscrypt feature. `bytes_per_inode`:
// mkfs's -i (0: its default); a filesystem of few large files takes a large one, so that the
// kernel has few inode tables to zero behind a mount. Blocking.
Status CreateExt4Image(const std::string& path, uint64_t mib, bool encrypt = false,
                       uint64_t bytes_per_inode = 0);

// Attaches `image` to a free loop device (auto-cleared on unmount) and mounts it as ext4 with
// the mount data `options` (e.g. "discard": freed blocks are punched out of the image). A
// device that still backs the image is mounted instead; a mount that fails while such a
// device goes away (or a new device's with EIO) is tried again, up to 5 s. Blocking.
Status MountLoopExt4(const std::string& image, const std::string& target,
                     const std::string& options = "");

// Unmounts `target`; detaches lazily when busy. A path that is not mounted is not an error.
Status Unmount(const std::string& target);

// True when `path` itself is a mount point.
bool IsMountPoint(const std::string& path);

struct FilesystemUsage {
  uint64_t size_bytes = 0;   // what the filesystem can hold
  uint64_t used_bytes = 0;   // blocks in use, metadata included
  uint64_t avail_bytes = 0;  // what an unprivileged writer can still add
};
// statvfs of the filesystem holding `path`.
Result<FilesystemUsage> GetFilesystemUsage(const std::string& path);

// Mount points at or below `prefix`, deepest first (the order to unmount them in).
std::vector<std::string> MountsUnder(const std::string& prefix);

}  // namespace adapt::os
