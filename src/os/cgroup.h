// cgroups that runsc made for adapt's sandboxes (always below "adapt/").
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace adapt::os {

// The cgroup path runsc is given for a sandbox: "/adapt/<id>".
std::string SandboxCgroupPath(const std::string& sandbox_id);

// Removes the sandbox's cgroup from every v1 hierarchy and from the v2 tree, if present.
// Only paths below adapt/ are ever touched.
Status RemoveSandboxCgroup(const std::string& sandbox_id);

// How many processes of the sandbox's cgroup the kernel's out-of-memory killer has killed
// (v1 memory.oom_control, v2 memory.events: "oom_kill N"); 0 when none or no cgroup.
uint64_t SandboxOomKills(const std::string& sandbox_id);

// Sets the sandbox's CPU bandwidth: `quota_us` of CPU time per `period_us` (v1
// cpu.cfs_period_us and cpu.cfs_quota_us, v2 cpu.max) in every hierarchy that holds the cpu
// controller for it. Fails when none does, or a write fails.
Status SetSandboxCpuLimit(const std::string& sandbox_id, int64_t quota_us, int64_t period_us);

// True when a cgroup for the sandbox exists in any hierarchy.
bool SandboxCgroupExists(const std::string& sandbox_id);

}  // namespace adapt::os
