// Warm pool specs: which sandboxes adaptd boots ahead of any request ("IMAGE=N[,cpu=C]
// [,memoryMiB=M][,diskMiB=D]"), and whether a create's settings can be given to a sandbox that
// is already booted. Pure functions; the pool itself is core/warm_pool.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/sandbox_config.h"

namespace adapt::core {

struct PoolSpec {
  std::string image;  // a local image reference ("debian:12")
  int size = 0;       // members kept ready
  int64_t cpu = 0;
  int64_t memory_mib = 0;
  int64_t disk_mib = 0;
  // What a member is booted for and a create must match: image and resource shape.
  std::string Key() const;
};

// Parses one --warm-pool value; the shape defaults to a create's defaults.
Result<PoolSpec> ParsePoolSpec(const std::string& text);
// Parses ADAPT_WARM_POOLS / repeated flags: specs separated by ';'. Two specs for one key
// are refused.
Result<std::vector<PoolSpec>> ParsePoolSpecs(const std::vector<std::string>& texts);

// The pool key a create's validated config would claim from, or why a booted sandbox cannot
// take it (a startup command, durable storage, a resolver chosen at boot).
struct PoolFit {
  std::string key;     // set when the request can use a pooled sandbox
  std::string reason;  // set otherwise
};
// `default_dns` is the resolver pooled sandboxes boot with (adaptd's --dns): open egress
// naming it is what a member already has.
PoolFit FitForPool(const store::SandboxConfig& config, const std::string& default_dns);

// The network of a pool member as booted (egress open, the default resolver).
store::NetworkConfig PoolMemberNetwork();

}  // namespace adapt::core
