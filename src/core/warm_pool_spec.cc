#include "core/warm_pool_spec.h"

#include <set>

#include "base/text.h"
#include "core/sandbox_limits.h"

namespace adapt::core {
namespace {

Result<int64_t> ParseNumber(const std::string& text, const std::string& what, int64_t min,
                            int64_t max) {
  int64_t v = 0;
  if (text.empty() || text.size() > 12)
    return InvalidArgument("warmPool", what + " must be a number");
  for (char c : text) {
    if (c < '0' || c > '9') return InvalidArgument("warmPool", what + " must be a number");
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max)
    return InvalidArgument("warmPool", what + " must be between " + std::to_string(min) + " and " +
                                           std::to_string(max));
  return v;
}

std::vector<std::string> SplitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

}  // namespace

std::string PoolSpec::Key() const {
  return image + "|cpu=" + std::to_string(cpu) + "|memoryMiB=" + std::to_string(memory_mib) +
         "|diskMiB=" + std::to_string(disk_mib);
}

Result<PoolSpec> ParsePoolSpec(const std::string& text) {
  auto parts = SplitOn(text, ',');
  size_t eq = parts[0].rfind('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument("warmPool",
                           "a warm pool is IMAGE=N[,cpu=C][,memoryMiB=M][,diskMiB=D], "
                           "not '" +
                               text + "'");
  PoolSpec spec;
  spec.image = parts[0].substr(0, eq);
  ASSIGN_OR_RETURN(int64_t size, ParseNumber(parts[0].substr(eq + 1), "the pool size", 0, 64));
  spec.size = static_cast<int>(size);
  spec.cpu = limits::kCpuDefault;
  spec.memory_mib = limits::kMemoryMiBDefault;
  spec.disk_mib = limits::kDiskMiBDefault;
  std::set<std::string> seen;
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t e = parts[i].find('=');
    std::string name = parts[i].substr(0, e);
    if (e == std::string::npos || !seen.insert(name).second)
      return InvalidArgument("warmPool", "'" + parts[i] + "' in warm pool '" + text +
                                             "' must be cpu=, memoryMiB= or diskMiB=, once each");
    std::string value = parts[i].substr(e + 1);
    if (name == "cpu") {
      ASSIGN_OR_RETURN(spec.cpu, ParseNumber(value, "cpu", limits::kCpuMin, limits::kCpuMax));
    } else if (name == "memoryMiB") {
      ASSIGN_OR_RETURN(spec.memory_mib, ParseNumber(value, "memoryMiB", limits::kMemoryMiBMin,
                                                    limits::kMemoryMiBMax));
    } else if (name == "diskMiB") {
      ASSIGN_OR_RETURN(spec.disk_mib,
                       ParseNumber(value, "diskMiB", limits::kDiskMiBMin, limits::kDiskMiBMax));
    } else {
      return InvalidArgument("warmPool", "unknown warm pool setting '" + name + "' in '" + text +
                                             "' (cpu, memoryMiB, diskMiB)");
    }
  }
  return spec;
}

Result<std::vector<PoolSpec>> ParsePoolSpecs(const std::vector<std::string>& texts) {
  std::vector<PoolSpec> out;
  std::set<std::string> keys;
  for (const auto& text : texts) {
    for (const auto& one : SplitOn(text, ';')) {
      if (one.empty()) continue;
      ASSIGN_OR_RETURN(PoolSpec spec, ParsePoolSpec(one));
      if (!keys.insert(spec.Key()).second)
        return InvalidArgument("warmPool", "warm pool '" + one + "' is given twice");
      if (spec.size > 0) out.push_back(spec);
    }
  }
  return out;
}

PoolFit FitForPool(const store::SandboxConfig& c, const std::string& default_dns) {
  if (c.startup)
    return {"", "a startup command runs as the sandbox's workload, which is chosen at boot"};
  if (c.startup_class == "durable" || c.storage)
    return {"", "durable storage is mounted at /workspace at boot"};
  if (c.security_profile != "restricted")
    return {"", "pooled sandboxes boot with the restricted profile's capabilities"};
  const store::NetworkConfig& n = c.network;
  // Seed 001: egress "none" has no guest network interface at all, and a member has one.
  if (n.egress == "none")
    return {"", "egress none means no network interface, and pooled sandboxes boot with one"};
  if (n.dns_disabled)
    return {"", "network.dns null leaves /etc/resolv.conf empty, written at boot"};
  if (n.dns && !(n.egress == "open" && *n.dns == default_dns))
    return {"", "network.dns is written to /etc/resolv.conf at boot"};
  if (!n.hostnames.empty())
    return {"", "network.hostnames needs its DNS proxy in /etc/resolv.conf at boot"};
  PoolSpec shape;
  shape.image = c.image;
  shape.cpu = c.cpu;
  shape.memory_mib = c.memory_mib;
  shape.disk_mib = c.disk_mib;
  return {shape.Key(), ""};
}

store::NetworkConfig PoolMemberNetwork() { return store::NetworkConfig{}; }

}  // namespace adapt::core
