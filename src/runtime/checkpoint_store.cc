#include "runtime/checkpoint_store.h"

#include <algorithm>

#include "base/hkdf.h"
#include "base/ignore_error.h"
#include "os/files.h"
#include "os/fscrypt.h"
#include "os/mount.h"
#include "os/sparse_copy.h"
#include "os/tree_copy.h"

namespace adapt::runtime {
namespace {

// Checkpoints are a few large files each: one inode per MiB leaves the kernel little to
// initialise behind the first mount of a large store.
constexpr uint64_t kBytesPerInode = 1 << 20;
constexpr uint64_t kMinStoreMib = 1024;
constexpr uint64_t kMaxStoreMib = 16ull << 20;  // 16 TiB

}  // namespace

CheckpointStorePaths CheckpointStoreAt(const std::string& state_dir) {
  std::string mount = state_dir + "/checkpoint-store";
  return {state_dir + "/checkpoint-store.img", mount, mount + "/data"};
}

Result<std::string> DeriveCheckpointStoreKey(const std::string& master) {
  auto key = HkdfSha512(master, "adapt-storage-v1", "checkpoints", os::kFscryptKeyBytes);
  if (!key.ok()) return key.status().WithContext("deriving the checkpoint store's key");
  return key;
}

Status OpenCheckpointStore(const CheckpointStorePaths& paths, const std::string& key) {
  if (!os::Exists(paths.image)) {
    std::string dir = paths.image.substr(0, paths.image.rfind('/'));
    ASSIGN_OR_RETURN(os::FilesystemUsage host, os::GetFilesystemUsage(dir));
    uint64_t mib = std::clamp(host.size_bytes >> 20, kMinStoreMib, kMaxStoreMib);
    RETURN_IF_ERROR(os::CreateExt4Image(paths.image, mib, /*encrypt=*/true, kBytesPerInode)
                        .WithContext("making the checkpoint store"));
  }
  if (!os::IsMountPoint(paths.mount)) {
    RETURN_IF_ERROR(os::MakeDirs(paths.mount, 0700));
    RETURN_IF_ERROR(os::MountLoopExt4(paths.image, paths.mount, "discard")
                        .WithContext("mounting the checkpoint store"));
  }
  ASSIGN_OR_RETURN(std::string id, os::AddEncryptionKey(paths.mount, key));
  if (!os::Exists(paths.root)) RETURN_IF_ERROR(os::MakeDirs(paths.root, 0700));
  if (os::HasEncryptionPolicy(paths.root, id)) return Status::Ok();
  // Only an empty directory takes a policy: one made just now, or left by a crash between
  // mkdir and the policy. A full one was made under another key.
  if (!os::ListDir(paths.root).empty())
    return Status(Code::kUnavailable,
                  "the checkpoint store " + paths.image +
                      " was made with another storage master key than this one");
  return os::SetEncryptionPolicy(paths.root, id).WithContext("encrypting the checkpoint store");
}

Status CloseCheckpointStore(const CheckpointStorePaths& paths) { return os::Unmount(paths.mount); }

Status MoveIntoCheckpointStore(const std::string& from, const std::string& to) {
  if (!os::Exists(from)) return Status::Ok();
  if (!os::Exists(to)) {
    std::string moving = to + ".moving";
    RETURN_IF_ERROR(os::RemoveTree(moving));
    RETURN_IF_ERROR(os::MakeDirs(to.substr(0, to.rfind('/')), 0700));
    Status st = os::CopyTreeExactly(from, moving);
    if (st.ok()) st = os::SyncPath(moving);
    if (st.ok()) st = os::Rename(moving, to);
    if (!st.ok()) {
      IgnoreError(os::RemoveTree(moving), "a later move starts again; the error is reported");
      return st.WithContext("moving " + from + " into the checkpoint store");
    }
  }
  return os::RemoveTree(from);
}

}  // namespace adapt::runtime
