#include "os/cgroup.h"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>

#include "os/errno_status.h"
#include "os/files.h"

namespace adapt::os {
namespace {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

std::vector<std::string> Candidates(const std::string& sandbox_id) {
  std::vector<std::string> out;
  // v2 (unified) layout: the tree itself; v1/hybrid: one directory per controller.
  out.push_back(std::string(kCgroupRoot) + "/adapt/" + sandbox_id);
  for (const auto& hierarchy : ListDir(kCgroupRoot)) {
    out.push_back(std::string(kCgroupRoot) + "/" + hierarchy + "/adapt/" + sandbox_id);
  }
  return out;
}

}  // namespace

std::string SandboxCgroupPath(const std::string& sandbox_id) { return "/adapt/" + sandbox_id; }

Status RemoveSandboxCgroup(const std::string& sandbox_id) {
  Status result;
  for (const auto& dir : Candidates(sandbox_id)) {
    // Sub-cgroups first: runsc may create per-container children.
    for (const auto& child : ListDir(dir)) {
      std::string sub = dir + "/" + child;
      if (std::filesystem::is_directory(sub)) ::rmdir(sub.c_str());
    }
    if (::rmdir(dir.c_str()) != 0 && errno != ENOENT)
      result = ErrnoStatus("removing cgroup " + dir);
  }
  return result;
}

uint64_t SandboxOomKills(const std::string& sandbox_id) {
  uint64_t kills = 0;
  for (const auto& dir : Candidates(sandbox_id)) {
    for (const char* file : {"/memory.oom_control", "/memory.events"}) {
      auto text = ReadFile(dir + file);
      if (!text.ok()) continue;
      std::istringstream in(*text);
      std::string key;
      uint64_t value = 0;
      while (in >> key >> value) {
        if (key == "oom_kill") kills += value;
      }
    }
  }
  return kills;
}

Status SetSandboxCpuLimit(const std::string& sandbox_id, int64_t quota_us, int64_t period_us) {
  bool set = false;
  for (const auto& dir : Candidates(sandbox_id)) {
    if (Exists(dir + "/cpu.cfs_quota_us")) {
      // The period first: the kernel checks the quota against the period in force.
      RETURN_IF_ERROR(WriteExistingFile(dir + "/cpu.cfs_period_us", std::to_string(period_us)));
      RETURN_IF_ERROR(WriteExistingFile(dir + "/cpu.cfs_quota_us", std::to_string(quota_us)));
      set = true;
    } else if (Exists(dir + "/cpu.max")) {
      RETURN_IF_ERROR(WriteExistingFile(
          dir + "/cpu.max", std::to_string(quota_us) + " " + std::to_string(period_us)));
      set = true;
    }
  }
  if (!set) return NotFound("sandbox " + sandbox_id + " has no cgroup with the cpu controller");
  return Status::Ok();
}

bool SandboxCgroupExists(const std::string& sandbox_id) {
  for (const auto& dir : Candidates(sandbox_id)) {
    if (Exists(dir)) return true;
  }
  return false;
}

}  // namespace adapt::os
