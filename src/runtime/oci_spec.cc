#include "runtime/oci_spec.h"

#include <nlohmann/json.hpp>

#include "os/cgroup.h"
#include "runtime/security_profile.h"

namespace adapt::runtime {

namespace {

nlohmann::json Process(const SandboxSpec& s) {
  using nlohmann::json;
  json caps = s.process.capabilities.empty() ? json(ProfileCapabilities(s.security_profile))
                                             : json(s.process.capabilities);
  return {{"terminal", false},
          {"user", {{"uid", s.process.uid}, {"gid", s.process.gid}}},
          {"args", s.process.argv},
          {"env", s.process.env},
          {"cwd", s.process.cwd.empty() ? "/" : s.process.cwd},
          {"capabilities",
           {{"bounding", caps}, {"effective", caps}, {"inheritable", caps}, {"permitted", caps}}},
          {"rlimits", json::array({{{"type", "RLIMIT_NOFILE"}, {"hard", 65536}, {"soft", 65536}}})},
          {"noNewPrivileges", true}};
}

}  // namespace

std::string RenderOciProcess(const SandboxSpec& s) { return Process(s).dump(2); }

std::string RenderOciSpec(const SandboxSpec& s) {
  using nlohmann::json;
  json process = Process(s);
  json mounts = json::array({
      {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
      {{"destination", "/dev"}, {"type", "tmpfs"}, {"source", "tmpfs"}},
      {{"destination", "/sys"},
       {"type", "sysfs"},
       {"source", "sysfs"},
       {"options", {"nosuid", "noexec", "nodev", "ro"}}},
      {{"destination", kHelpersMount},
       {"type", "bind"},
       {"source", s.helpers_dir},
       {"options", {"rbind", "ro"}}},
  });
  for (const auto& dir : s.read_only_dirs)
    mounts.push_back({{"destination", dir},
                      {"type", "bind"},
                      {"source", s.rootfs + dir},
                      {"options", {"rbind", "ro", "nosuid", "nodev"}}});
  if (!s.session_dir.empty())
    mounts.push_back({{"destination", kAgentSessionMount},
                      {"type", "bind"},
                      {"source", s.session_dir},
                      // Read-only: the agent connects to its socket there, and the sandbox
                      // can neither fill the host's state filesystem through it nor put a
                      // file or link where adaptd binds.
                      {"options", {"rbind", "ro", "nosuid", "nodev", "noexec"}}});
  if (!s.workspace_dir.empty())
    mounts.push_back({{"destination", kWorkspaceMount},
                      {"type", "bind"},
                      {"source", s.workspace_dir},
                      {"options", {"rbind", "rw", "nosuid", "nodev"}}});
  if (!s.resolv_conf.empty())
    mounts.push_back({{"destination", "/etc/resolv.conf"},
                      {"type", "bind"},
                      {"source", s.resolv_conf},
                      {"options", {"rbind", "ro"}}});
  if (!s.ld_so_preload.empty())
    mounts.push_back({{"destination", "/etc/ld.so.preload"},
                      {"type", "bind"},
                      {"source", s.ld_so_preload},
                      {"options", {"rbind", "ro"}}});
  json network_ns = {{"type", "network"}};
  if (!s.netns_path.empty()) network_ns["path"] = s.netns_path;
  json resources = {
      {"memory", {{"limit", static_cast<int64_t>(s.memory_mib) * 1024 * 1024}}},
      {"pids", {{"limit", s.pids_limit}}},
  };
  if (!s.cpu_limit_by_shim)
    resources["cpu"] = {{"quota", CpuQuotaUs(s.cpu)}, {"period", kCpuPeriodUs}};
  json spec = {
      {"ociVersion", "1.0.2"},
      {"process", process},
      {"root", {{"path", s.rootfs}, {"readonly", false}}},
      {"hostname", s.hostname},
      {"mounts", mounts},
      {"linux",
       {{"namespaces", json::array({{{"type", "pid"}},
                                    network_ns,
                                    {{"type", "ipc"}},
                                    {{"type", "uts"}},
                                    {{"type", "mount"}}})},
        {"resources", resources},
        {"cgroupsPath", os::SandboxCgroupPath(s.id)}}},
  };
  return spec.dump(2);
}

}  // namespace adapt::runtime
