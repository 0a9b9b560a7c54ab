// Mounts: overlay root filesystems, loop-backed ext4 disks, and finding what is mounted.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::os {

// Mounts an overlay at `target` with `lower` read-only and `upper`/`work` writable.
Status MountOverlay(const std::string& lower, const std::string& upper, const std::string& work,
                    const std::string& target);

// Attaches `image` to a free loop device (auto-cleared on unmount) and mounts it as ext4.
Status MountLoopExt4(const std::string& image, const std::string& target);

// Unmounts `target`; detaches lazily when busy. A path that is not mounted is not an error.
Status Unmount(const std::string& target);

// Mount points at or below `prefix`, deepest first (the order to unmount them in).
std::vector<std::string> MountsUnder(const std::string& prefix);

}  // namespace adapt::os
