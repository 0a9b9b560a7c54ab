// A sandbox's root filesystem: an overlay whose read-only lower layers are the image and
// whose writable layer lives on a sparse ext4 disk of diskMiB, so that writes beyond the
// disk size fail inside the sandbox with ENOSPC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/disk_templates.h"

namespace adapt::runtime {

struct RootfsPaths {
  explicit RootfsPaths(const std::string& sandbox_dir)
      : disk_image(sandbox_dir + "/disk.img"),
        disk_mount(sandbox_dir + "/disk"),
        rootfs(sandbox_dir + "/rootfs") {}
  std::string disk_image;
  std::string disk_mount;
  std::string rootfs;
};

// Creates the disk (when absent, from `disks`) and mounts disk and overlay. On failure,
// unmounts what it mounted. Blocking: call from a worker thread.
// `lower_dirs` are the image's layers, topmost first (a local image has one).
Status MountRootfs(const std::string& sandbox_dir, const std::vector<std::string>& lower_dirs,
                   uint64_t disk_mib, DiskTemplates& disks);

// Unmounts everything below `sandbox_dir`; the disk image stays.
Status UnmountRootfs(const std::string& sandbox_dir);

}  // namespace adapt::runtime
