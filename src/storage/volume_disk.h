// A volume on the host: a sparse ext4 image (with the fscrypt feature) attached through a
// loop device and mounted under the state directory. Sandboxes bind-mount its `workspace`
// directory, which carries a v2 encryption policy: file contents and names are encrypted
// in the image, and readable only while the volume's key is in the filesystem's keyring.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "os/mount.h"

namespace adapt::storage {

struct VolumePaths {
  VolumePaths(const std::string& root, const std::string& id)
      : image(root + "/" + id + ".img"), mount(root + "/" + id), workspace(mount + "/workspace") {}
  std::string image;
  std::string mount;
  std::string workspace;  // the encrypted directory sandboxes see at /workspace
};

// Formats the image (absent before). Blocking.
Status CreateVolumeImage(const VolumePaths& paths, uint64_t size_mib);

// Mounts the image unless it is mounted, adds `key` to the filesystem's keyring, and makes
// the encrypted workspace directory when it is not there yet. Returns the hex identifier the
// kernel gives the key. `expected_identifier` (hex, empty: none yet) must match it: another
// master key cannot open the volume. Idempotent; blocking.
Result<std::string> OpenVolume(const VolumePaths& paths, const std::string& key,
                               const std::string& expected_identifier);

// Unmounts the volume (detaching lazily when busy); the image stays.
Status CloseVolume(const VolumePaths& paths);

// Unmounts and removes the image and its mount point.
Status RemoveVolume(const VolumePaths& paths);

// The mounted filesystem's usage; NotFound when it is not mounted.
Result<os::FilesystemUsage> VolumeUsage(const VolumePaths& paths);

}  // namespace adapt::storage
