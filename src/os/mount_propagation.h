// Mount propagation below adaptd's state directory. A child that runs in a mount namespace
// of its own (SpawnOptions::hide_proc_sys_net, the database server's) starts with a copy of
// every mount of the host, the disks of the sandboxes running then among them. A private copy
// keeps such a disk's filesystem, and the loop device under it, for as long as the child
// lives, whatever the host unmounts; a slave copy of a shared mount loses what the host
// unmounts below it.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::os {

// What ShareMountsBelow found or made of the mount holding a directory.
enum class MountSharing {
  kShared,           // shared already (systemd's /, or an operator's filesystem, made shared)
  kBoundOntoItself,  // the directory is a shared bind of itself, made now or by an earlier start
  kLeftPrivate,      // private, with mounts below it from before: a bind would hide them
};

// Makes the mount that holds directory `dir` shared, so that each mount made below it later
// is shared too and is unmounted from the namespaces copied as slaves when the host unmounts
// it. When that mount is not shared (a host without systemd makes / private) and `dir` is
// not a mount point, `dir` is bind-mounted onto itself first, unless something is mounted
// below it already (an earlier adaptd's sandboxes), which is left as it is.
Result<MountSharing> ShareMountsBelow(const std::string& dir);

// Unmounts `dir`'s bind of itself (see ShareMountsBelow), lazily, unless something is still
// mounted below it (a sandbox that runs on while adaptd is away): the next start finds it
// then. Call it once nothing will mount below `dir` any more.
Status ReleaseBindOfItself(const std::string& dir);

}  // namespace adapt::os
