// The one check of SandboxLimits, shared by both Store implementations so that a refusal reads
// the same whichever answers: each calls it inside the transaction that records the sandbox.
// Private to src/store.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "store/sandbox_store.h"

namespace adapt::store {

// What an organization's sandboxes hold, counted in the transaction.
struct LiveTotals {
  int64_t sandboxes = 0;   // not deleting, deleted or failed
  int64_t cpu = 0;         // of the provisioning and running ones
  int64_t memory_mib = 0;  // likewise
};

bool CountsAsLive(const std::string& status);
bool UsesCompute(const std::string& status);

// OK when `adding` fits beside `now`; kResourceExhausted naming the limit, its value and what
// to do otherwise. `new_sandbox`: a create (counts against `sandboxes`) rather than a start.
Status CheckSandboxLimits(const SandboxLimits& limits, const LiveTotals& now,
                          const SandboxConfig& adding, bool new_sandbox);

// The same for a new volume of `adding_mib` beside `used_mib` (limit in GiB), and a new
// endpoint beside `count`.
Status CheckStorageLimit(int64_t limit_gib, int64_t used_mib, int64_t adding_mib);
Status CheckEndpointLimit(int64_t limit, int64_t count);
// An endpoint to sandbox `id`, whose stored status is `status` ("" when there is no such row).
Status CheckEndpointTarget(const std::string& id, const std::string& status);
// A new queued job beside `queued` ones.
Status CheckQueuedJobsLimit(int64_t limit, int64_t queued);

inline bool HasAny(const SandboxLimits& l) { return l.sandboxes || l.cpu || l.memory_mib; }

}  // namespace adapt::store
