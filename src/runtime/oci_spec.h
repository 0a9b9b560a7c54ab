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
};

struct SandboxSpec {
  std::string id;
  std::string rootfs;       // the mounted overlay
  std::string helpers_dir;  // bind-mounted read-only at /.adapt (adapt-pause lives there)
  ProcessSpec process;
  int cpu = 1;
  uint64_t memory_mib = 1024;
  int64_t pids_limit = 4096;
  std::string hostname;
  // The network namespace runsc joins (--network=sandbox); empty: runsc makes its own.
  std::string netns_path;
  // Bind-mounted read-only at /etc/resolv.conf when set.
  std::string resolv_conf;
};

// Renders config.json for `spec`.
std::string RenderOciSpec(const SandboxSpec& spec);

}  // namespace adapt::runtime
