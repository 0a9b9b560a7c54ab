#include "storage/volume_disk.h"

#include "base/hex.h"
#include "os/files.h"
#include "os/fscrypt.h"
#include "storage/volume_key.h"

namespace adapt::storage {

Status CreateVolumeImage(const VolumePaths& paths, uint64_t size_mib) {
  return os::CreateExt4Image(paths.image, size_mib, /*encrypt=*/true)
      .WithContext("formatting the storage image");
}

Result<std::string> OpenVolume(const VolumePaths& paths, const std::string& key,
                               const std::string& expected_identifier) {
  if (!os::IsMountPoint(paths.mount)) {
    RETURN_IF_ERROR(os::MakeDirs(paths.mount, 0700));
    RETURN_IF_ERROR(os::MountLoopExt4(paths.image, paths.mount));
  }
  ASSIGN_OR_RETURN(std::string id, os::AddEncryptionKey(paths.mount, key));
  std::string id_hex = HexEncode(id);
  if (!expected_identifier.empty() && id_hex != expected_identifier)
    return Status(Code::kUnavailable,
                  "the storage master key is not the one this storage was made with");
  if (!os::Exists(paths.workspace)) RETURN_IF_ERROR(os::MakeDirs(paths.workspace, 0777));
  if (!os::HasEncryptionPolicy(paths.workspace, id)) {
    // Only an empty directory takes a policy: one made just now, or left by a crash
    // between mkdir and the policy.
    RETURN_IF_ERROR(os::SetEncryptionPolicy(paths.workspace, id));
  }
  return id_hex;
}

Status CloseVolume(const VolumePaths& paths) { return os::Unmount(paths.mount); }

Status RemoveVolume(const VolumePaths& paths) {
  RETURN_IF_ERROR(CloseVolume(paths));
  if (os::IsMountPoint(paths.mount))
    return Internal("storage mount " + paths.mount + " is still mounted");
  for (const auto& p : {paths.image, paths.image + ".new"}) {
    if (os::Exists(p)) RETURN_IF_ERROR(os::RemoveTree(p));
  }
  if (os::Exists(paths.mount)) RETURN_IF_ERROR(os::RemoveTree(paths.mount));
  return Status::Ok();
}

Result<os::FilesystemUsage> VolumeUsage(const VolumePaths& paths) {
  if (!os::IsMountPoint(paths.mount)) return NotFound("storage is not mounted");
  return os::GetFilesystemUsage(paths.mount);
}

}  // namespace adapt::storage
