// A running sandbox's CPU and memory now (GET /v1/sandboxes/{id}/stats, `adapt sandbox
// stats`, the dashboard's charts), from its cgroup. A caller that wants a rate samples twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/auth.h"
#include "core/sandbox_service.h"

namespace adapt::core {

struct SandboxStats {
  std::string sandbox_id;
  int64_t at = 0;                // ms since epoch, when read
  int cpu_limit = 0;             // the sandbox's CPUs
  int64_t memory_limit_mib = 0;  // the sandbox's memory
  uint64_t cpu_usage_usec = 0;   // CPU time since it started, all CPUs together
  uint64_t memory_bytes = 0;
  uint64_t pids = 0;
};

// NotFound for an unknown sandbox or another organization's; Conflict (naming its status)
// unless it is running.
Result<SandboxStats> ReadSandboxStats(SandboxService& sandboxes, const Principal& who,
                                      const std::string& sandbox_id);

}  // namespace adapt::core
