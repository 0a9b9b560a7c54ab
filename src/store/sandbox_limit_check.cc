#include "store/sandbox_limit_check.h"

#include <string>

namespace adapt::store {
namespace {

constexpr const char* kLargerPlan = "ask the operator for a larger plan";

Status Refuse(std::string message) { return Status(Code::kResourceExhausted, std::move(message)); }

}  // namespace

bool CountsAsLive(const std::string& status) {
  return status != "deleting" && status != "deleted" && status != "failed";
}

bool UsesCompute(const std::string& status) {
  return status == "provisioning" || status == "running";
}

Status CheckSandboxLimits(const SandboxLimits& limits, const LiveTotals& now,
                          const SandboxConfig& adding, bool new_sandbox) {
  if (new_sandbox && limits.sandboxes && now.sandboxes >= *limits.sandboxes)
    return Refuse("the organization already has " + std::to_string(now.sandboxes) +
                  " sandboxes, the most it may have (limit concurrent_sandboxes = " +
                  std::to_string(*limits.sandboxes) + "); delete one first, or " + kLargerPlan);
  if (limits.cpu && now.cpu + adding.cpu > *limits.cpu)
    return Refuse("the plan allows " + std::to_string(*limits.cpu) +
                  " cpus in total for running sandboxes (limit cpu = " +
                  std::to_string(*limits.cpu) + "); " + std::to_string(now.cpu) +
                  " are in use and this sandbox needs " + std::to_string(adding.cpu) +
                  "; stop or delete a sandbox, ask for fewer cpus, or " + kLargerPlan);
  if (limits.memory_mib && now.memory_mib + adding.memory_mib > *limits.memory_mib)
    return Refuse("the plan allows " + std::to_string(*limits.memory_mib) +
                  " MiB of memory in total for running sandboxes (limit memory_mib = " +
                  std::to_string(*limits.memory_mib) + "); " + std::to_string(now.memory_mib) +
                  " MiB are in use and this sandbox needs " + std::to_string(adding.memory_mib) +
                  " MiB; stop or delete a sandbox, ask for less memory, or " + kLargerPlan);
  return Status::Ok();
}

Status CheckStorageLimit(int64_t limit_gib, int64_t used_mib, int64_t adding_mib) {
  if (used_mib + adding_mib <= limit_gib * 1024) return Status::Ok();
  return Refuse(
      "the plan allows " + std::to_string(limit_gib) +
      " GiB of persistent storage (limit persistent_storage_gib = " + std::to_string(limit_gib) +
      "); " + std::to_string(used_mib) + " MiB are allocated and this storage needs " +
      std::to_string(adding_mib) + " MiB; delete storage, ask for less, or " + kLargerPlan);
}

Status CheckEndpointLimit(int64_t limit, int64_t count) {
  if (count < limit) return Status::Ok();
  return Refuse("the organization already has " + std::to_string(count) +
                " endpoints, the most it may have (limit endpoints = " + std::to_string(limit) +
                "); remove one first, or " + kLargerPlan);
}

Status CheckEndpointTarget(const std::string& id, const std::string& status) {
  if (status.empty()) return NotFound("sandbox " + id + " not found");
  if (status == "running" || status == "provisioning") return Status::Ok();
  return Conflict("sandbox " + id + " is " + status +
                  "; endpoints route only to a running sandbox");
}

Status CheckQueuedJobsLimit(int64_t limit, int64_t queued) {
  if (queued < limit) return Status::Ok();
  return Refuse("the organization already has " + std::to_string(queued) +
                " queued jobs, the most it may have (limit queued_jobs = " + std::to_string(limit) +
                "); wait for them to start, cancel one, or " + kLargerPlan);
}

}  // namespace adapt::store
