// Whether a file is still the backing of a loop device (os/mount.cc attaches them with
// autoclear, so the device goes once its last mount does).
#pragma once

#include <string>

namespace adapt::os {

// True while a loop device is backed by `image`: a mount of it may then live on in the mount
// namespace of a process that has not exited yet, with writes not yet in the file.
bool LoopDeviceBacks(const std::string& image);

}  // namespace adapt::os
