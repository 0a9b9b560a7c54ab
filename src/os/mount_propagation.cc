#include "os/mount_propagation.h"

#include <sys/mount.h>

#include <filesystem>

#include "os/errno_status.h"
#include "os/mount.h"
#include "os/mount_info.h"

namespace adapt::os {
namespace {

Result<std::string> Canonical(const std::string& dir) {
  std::error_code ec;
  auto path = std::filesystem::canonical(dir, ec);
  if (ec) return Status(Code::kInternal, "resolving " + dir + ": " + ec.message());
  return path.string();
}

// Whether `m` is a bind of the directory it covers: the same filesystem and directory as its
// parent mount shows at its mount point.
bool IsBindOfItself(const std::vector<MountInfo>& mounts, const MountInfo& m) {
  for (const auto& parent : mounts) {
    if (parent.id != m.parent) continue;
    std::string below = m.point.substr(parent.point == "/" ? 0 : parent.point.size());
    std::string root = parent.root == "/" ? below : parent.root + below;
    return parent.device == m.device && m.root == root;
  }
  return false;
}

}  // namespace

Result<MountSharing> ShareMountsBelow(const std::string& dir) {
  ASSIGN_OR_RETURN(std::string path, Canonical(dir));
  auto mounts = ReadMountInfo();
  const MountInfo* holder = MountHolding(mounts, path);
  if (!holder) return Status(Code::kInternal, "no mount holds " + path);
  if (holder->point == path) {
    // A mount of its own: adaptd's bind from an earlier start, or the operator's filesystem.
    if (!holder->shared && ::mount(nullptr, path.c_str(), nullptr, MS_SHARED, nullptr) != 0)
      return ErrnoStatus("making the mount at " + path + " shared");
    return IsBindOfItself(mounts, *holder) ? MountSharing::kBoundOntoItself : MountSharing::kShared;
  }
  if (holder->shared) return MountSharing::kShared;
  if (!MountsUnder(path).empty()) return MountSharing::kLeftPrivate;
  if (::mount(path.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) != 0)
    return ErrnoStatus("bind-mounting " + path + " onto itself");
  if (::mount(nullptr, path.c_str(), nullptr, MS_SHARED, nullptr) != 0) {
    Status st = ErrnoStatus("making the bind of " + path + " shared");
    ::umount2(path.c_str(), UMOUNT_NOFOLLOW);
    return st;
  }
  return MountSharing::kBoundOntoItself;
}

Status ReleaseBindOfItself(const std::string& dir) {
  ASSIGN_OR_RETURN(std::string path, Canonical(dir));
  if (MountsUnder(path) != std::vector<std::string>{path}) return Status::Ok();
  // Lazily: the caller's own files there (adaptd's store, its lock) are still open. With
  // nothing mounted below, the detached bind lives on only for them.
  if (::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0)
    return ErrnoStatus("unmounting the bind of " + path);
  return Status::Ok();
}

}  // namespace adapt::os
