#include "core/sandbox_stats.h"

#include "base/time.h"
#include "os/cgroup_stats.h"

namespace adapt::core {

Result<SandboxStats> ReadSandboxStats(SandboxService& sandboxes, const Principal& who,
                                      const std::string& sandbox_id) {
  ASSIGN_OR_RETURN(auto sandbox, sandboxes.Get(who, sandbox_id));
  if (sandbox.status != "running")
    return Conflict("sandbox " + sandbox_id + " is " + sandbox.status +
                    ": stats are read while it runs");
  auto cgroup = os::ReadSandboxCgroupStats(sandbox_id);
  if (!cgroup.ok()) {
    // It stopped between the two reads, or runsc has not made its cgroup yet.
    if (cgroup.status().code() == Code::kNotFound)
      return Conflict("sandbox " + sandbox_id + " has no figures yet: try again");
    return cgroup.status();
  }
  SandboxStats stats;
  stats.sandbox_id = sandbox_id;
  stats.at = NowMillis();
  stats.cpu_limit = sandbox.config.cpu;
  stats.memory_limit_mib = sandbox.config.memory_mib;
  stats.cpu_usage_usec = cgroup->cpu_usage_usec;
  stats.memory_bytes = cgroup->memory_bytes;
  stats.pids = cgroup->pids;
  return stats;
}

}  // namespace adapt::core
