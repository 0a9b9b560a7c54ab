#include "runtime/rootfs.h"

#include "base/ignore_error.h"
#include "os/files.h"
#include "os/mount.h"

namespace adapt::runtime {

Status MountRootfs(const std::string& sandbox_dir, const std::vector<std::string>& lower_dirs,
                   uint64_t disk_mib, DiskTemplates& disks) {
  if (lower_dirs.empty()) return Internal("no image layers to mount for " + sandbox_dir);
  std::string lower;
  for (const auto& dir : lower_dirs) {
    // overlayfs separates layers with ':' and options with ','.
    if (dir.find_first_of(":,") != std::string::npos)
      return Internal("image layer path " + dir + " cannot be given to overlayfs");
    lower += (lower.empty() ? "" : ":") + dir;
  }
  RootfsPaths p(sandbox_dir);
  RETURN_IF_ERROR(os::MakeDirs(p.disk_mount, 0700));
  RETURN_IF_ERROR(os::MakeDirs(p.rootfs, 0755));
  if (!os::Exists(p.disk_image))
    RETURN_IF_ERROR(
        disks.CreateDisk(p.disk_image, disk_mib).WithContext("making the sandbox disk"));
  RETURN_IF_ERROR(os::MountLoopExt4(p.disk_image, p.disk_mount));
  Status st = os::MakeDirs(p.disk_mount + "/upper", 0755);
  if (st.ok()) st = os::MakeDirs(p.disk_mount + "/work", 0700);
  if (st.ok())
    st = os::MountOverlay(lower, p.disk_mount + "/upper", p.disk_mount + "/work", p.rootfs);
  if (!st.ok()) {
    IgnoreError(UnmountRootfs(sandbox_dir),
                "undoing a failed mount; its error is the one reported");
    return st;
  }
  return Status::Ok();
}

Status UnmountRootfs(const std::string& sandbox_dir) {
  Status result;
  for (const auto& point : os::MountsUnder(sandbox_dir)) {
    Status st = os::Unmount(point);
    if (!st.ok()) result = st;
  }
  return result;
}

}  // namespace adapt::runtime
