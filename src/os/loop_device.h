// Whether a file is still the backing of a loop device (os/mount.cc attaches them with
// autoclear, so the device goes once its last mount does).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace adapt::os {

// True while a loop device is backed by `image`: a mount of it may then live on in the mount
// namespace of a process that has not exited yet, with writes not yet in the file.
bool LoopDeviceBacks(const std::string& image);

// Who keeps LoopDeviceBacks true: the processes (at most `limit`, each "PID (COMM)") whose mount
// namespace still mounts the loop device backed by `image`. Empty when none is found. Reads
// every process's mountinfo: for a message about a device that will not go, not a hot path.
std::vector<std::string> LoopDeviceHolders(const std::string& image, size_t limit = 8);

}  // namespace adapt::os
