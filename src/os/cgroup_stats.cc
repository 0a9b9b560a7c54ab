#include "os/cgroup_stats.h"

#include <sstream>

#include "os/files.h"

namespace adapt::os {
namespace {

constexpr const char* kStatsCgroupRoot = "/sys/fs/cgroup";
// v1 reports "no limit" as the largest page-aligned 63-bit number; anything this big is none.
constexpr uint64_t kUnlimitedBytes = uint64_t{1} << 62;

std::optional<uint64_t> ReadCgroupNumber(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  std::istringstream in(*text);
  uint64_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

// The value of `key` in a "key value" per line file (cpu.stat).
std::optional<uint64_t> ReadCgroupKey(const std::string& path, const std::string& key) {
  auto text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  std::istringstream in(*text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::optional<uint64_t> LimitOrNone(std::optional<uint64_t> value) {
  if (!value || *value >= kUnlimitedBytes) return std::nullopt;
  return value;
}

}  // namespace

Result<CgroupStats> ReadSandboxCgroupStats(const std::string& sandbox_id) {
  const std::string root = kStatsCgroupRoot;
  const std::string v2 = root + "/adapt/" + sandbox_id;
  CgroupStats stats;
  if (Exists(v2 + "/cgroup.procs") && Exists(v2 + "/memory.current")) {
    stats.cpu_usage_usec = ReadCgroupKey(v2 + "/cpu.stat", "usage_usec").value_or(0);
    stats.memory_bytes = ReadCgroupNumber(v2 + "/memory.current").value_or(0);
    stats.memory_limit_bytes =
        LimitOrNone(ReadCgroupNumber(v2 + "/memory.max"));  // "max" reads as none
    stats.pids = ReadCgroupNumber(v2 + "/pids.current").value_or(0);
    return stats;
  }
  const std::string memory = root + "/memory/adapt/" + sandbox_id;
  if (!Exists(memory + "/memory.usage_in_bytes"))
    return Status(Code::kNotFound, "sandbox " + sandbox_id + " has no cgroup");
  stats.memory_bytes = ReadCgroupNumber(memory + "/memory.usage_in_bytes").value_or(0);
  stats.memory_limit_bytes = LimitOrNone(ReadCgroupNumber(memory + "/memory.limit_in_bytes"));
  stats.cpu_usage_usec =
      ReadCgroupNumber(root + "/cpuacct/adapt/" + sandbox_id + "/cpuacct.usage").value_or(0) / 1000;
  stats.pids = ReadCgroupNumber(root + "/pids/adapt/" + sandbox_id + "/pids.current").value_or(0);
  return stats;
}

}  // namespace adapt::os
