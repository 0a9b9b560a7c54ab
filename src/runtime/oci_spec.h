// The OCI runtime spec (config.json) that runsc is given for a sandbox.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adapt::runtime {

struct ProcessSpec {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "K=V"
  std::string cwd = "/";
  uint32_t uid = 0;
  uint32_t gid = 0;
  // The process runs nothing of the tenant's (adapt-pause, an interactive sandbox's init).
  bool idle = false;
  // Its capabilities (all four sets); empty: the security profile's.
  std::vector<std::string> capabilities;
};

struct SandboxSpec {
  std::string id;
  std::string rootfs;       // the mounted overlay
  std::string helpers_dir;  // bind-mounted read-only at kHelpersMount (adapt-pause lives there)
  // Holds the host socket of the sandbox's agent; bind-mounted at kAgentSessionMount.
  // Empty: none (no agent, or its socket is in helpers_dir: helpers_layout.h).
  std::string session_dir;
  ProcessSpec process;
  // "restricted" or "developer" (security_profile.h): the process's capabilities.
  std::string security_profile = "restricted";
  // Directories of the rootfs bound read-only over themselves (the package databases of a
  // restricted sandbox); each must be a plain directory of `rootfs`, links refused.
  std::vector<std::string> read_only_dirs;
  int cpu = 1;
  // true: config.json leaves the CPU limit out and the shim sets it on the sandbox's cgroup
  // once gVisor has booted, before any of the workload runs (CpuQuotaUs; see ShimConfig).
  bool cpu_limit_by_shim = false;
  uint64_t memory_mib = 1024;
  int64_t pids_limit = 4096;
  std::string hostname;
  // The network namespace runsc joins (--network=sandbox); empty: runsc makes its own.
  std::string netns_path;
  // Bind-mounted read-write at kWorkspaceMount when set (a durable sandbox's storage);
  // empty: the workspace is a directory of the sandbox's own writable layer.
  std::string workspace_dir;
  // Bind-mounted read-only at /etc/resolv.conf when set.
  std::string resolv_conf;
  // Bind-mounted read-only at /etc/ld.so.preload when set (statx_fix.h).
  std::string ld_so_preload;
};

// Where a sandbox sees adapt's helpers, and its session directory where it has one.
inline constexpr const char* kHelpersMount = "/.adapt";
inline constexpr const char* kAgentSessionMount = "/.adapt-session";
inline constexpr const char* kWorkspaceMount = "/workspace";
inline constexpr const char* kAgentBinaryInSandbox = "/.adapt/adapt-agent";

// The CPU bandwidth of `cpu` CPUs: this much CPU time per kCpuPeriodUs.
inline constexpr int64_t kCpuPeriodUs = 100000;
inline int64_t CpuQuotaUs(int cpu) { return kCpuPeriodUs * cpu; }

// Renders config.json for `spec`.
std::string RenderOciSpec(const SandboxSpec& spec);
// Renders config.json's "process" object alone (what `runsc exec` starts a process from).
std::string RenderOciProcess(const SandboxSpec& spec);

}  // namespace adapt::runtime
