// A running sandbox's resource figures from the cgroup runsc made for it (os/cgroup.h): CPU
// time, memory in use and its limit, processes. cgroup v2 and v1 hierarchies are both read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace adapt::os {

struct CgroupStats {
  uint64_t cpu_usage_usec = 0;  // CPU time used since the sandbox started, all CPUs together
  uint64_t memory_bytes = 0;    // memory charged to the cgroup now (page cache included)
  std::optional<uint64_t> memory_limit_bytes;  // none when unlimited
  uint64_t pids = 0;                           // tasks in the cgroup (runsc's, not the guest's)
};

// NotFound when the sandbox has no cgroup (it is not running).
Result<CgroupStats> ReadSandboxCgroupStats(const std::string& sandbox_id);

}  // namespace adapt::os
