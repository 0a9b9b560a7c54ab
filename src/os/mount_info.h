// The mount table of a process (/proc/PID/mountinfo), one entry a mount.
#pragma once

#include <string>
#include <vector>

namespace adapt::os {

struct MountInfo {
  std::string id;       // the mount's id
  std::string parent;   // its parent mount's id
  std::string device;   // MAJOR:MINOR of the mounted filesystem
  std::string root;     // the directory of that filesystem mounted here (a bind's source)
  std::string point;    // where, unescaped
  bool shared = false;  // in a peer group: mounts and unmounts below it propagate
};

// The mounts of `file` (default: this process's), in the kernel's order (a mount after the
// mounts it is stacked on). Empty when it cannot be read.
std::vector<MountInfo> ReadMountInfo(const std::string& file = "/proc/self/mountinfo");

// The entry whose point is the longest prefix of the canonical path `path` (for stacked
// mounts, the topmost): the mount that holds `path`. nullptr when none does.
const MountInfo* MountHolding(const std::vector<MountInfo>& mounts, const std::string& path);
// The entry would point into a table that is gone at the end of the statement.
const MountInfo* MountHolding(std::vector<MountInfo>&& mounts, const std::string& path) = delete;

}  // namespace adapt::os
