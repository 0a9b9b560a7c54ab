#include "core/checkpoint_service.h"

#include "base/ids.h"
#include "base/ignore_error.h"
#include "storage/volume_request.h"

namespace adapt::core {
namespace {

Checkpoint ToView(const runtime::NamedCheckpoint& c, const std::string& sandbox_id) {
  return Checkpoint{c.name, sandbox_id,        c.bytes,   c.created_at,
                    c.keep, c.runtime_version, c.platform};
}

std::string Gib(uint64_t bytes) {
  return std::to_string(bytes >> 30) + "." + std::to_string(((bytes >> 20) % 1024) * 10 / 1024);
}

}  // namespace

Result<store::SandboxRecord> CheckpointService::Owned(const Principal& who,
                                                      const std::string& sandbox_id,
                                                      const std::string& name, bool kept_ok) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(who.org_id, sandbox_id));
  if ((r.status == "deleted" || r.status == "deleting") &&
      !(kept_ok && !runtime_.ListNamedCheckpoints(sandbox_id).empty()))
    return NotFound("sandbox " + sandbox_id + " not found");
  if (!name.empty()) RETURN_IF_ERROR(storage::ValidateVolumeName(name, "name"));
  return r;
}

uint64_t CheckpointService::OrgCheckpointBytes(const std::string& org_id) {
  auto records = store_.ListSandboxesWithStatus(
      {"provisioning", "running", "hibernated", "completed", "failed", "unresolved"});
  if (!records.ok()) return 0;
  uint64_t total = 0;
  for (const auto& r : *records) {
    if (r.org_id != org_id) continue;
    for (const auto& c : runtime_.ListNamedCheckpoints(r.id)) total += c.bytes;
  }
  // Deleted sandboxes' checkpoints taken with keep.
  for (const auto& id : runtime_.SandboxesWithKeptCheckpoints()) {
    auto r = store_.GetSandbox(org_id, id);
    if (!r.ok() || (r->status != "deleted" && r->status != "deleting")) continue;
    for (const auto& c : runtime_.ListNamedCheckpoints(id)) total += c.bytes;
  }
  return total;
}

std::vector<MeteredCheckpoint> CheckpointService::AllForMetering() {
  std::vector<MeteredCheckpoint> out;
  auto add = [&](const store::SandboxRecord& r) {
    for (const auto& c : runtime_.ListNamedCheckpoints(r.id))
      out.push_back({r.org_id, r.id, c.name, c.bytes, c.created_at});
  };
  auto records = store_.ListSandboxesWithStatus(
      {"provisioning", "running", "hibernated", "completed", "failed", "unresolved"});
  if (records.ok())
    for (const auto& r : *records) add(r);
  for (const auto& id : runtime_.SandboxesWithKeptCheckpoints())
    if (auto r = store_.GetSandbox("", id);
        r.ok() && (r->status == "deleted" || r->status == "deleting"))
      add(*r);
  return out;
}

Status CheckpointService::CheckStorage(const std::string& org_id, bool or_equal) {
  if (!storage_limit_) return Status::Ok();
  ASSIGN_OR_RETURN(std::optional<int64_t> limit_gib, storage_limit_(org_id));
  if (!limit_gib) return Status::Ok();
  ASSIGN_OR_RETURN(store::OrgUsageRecord usage, store_.GetOrgUsage(org_id));
  uint64_t limit = static_cast<uint64_t>(*limit_gib) << 30;
  uint64_t used =
      (static_cast<uint64_t>(usage.persistent_storage_mib) << 20) + OrgCheckpointBytes(org_id);
  if (used > limit || (or_equal && used == limit))
    return Status(Code::kResourceExhausted,
                  "the organization's storage volumes and checkpoints take " + Gib(used) +
                      " GiB of its " + std::to_string(*limit_gib) +
                      " GiB persistent storage limit; delete checkpoints or volumes first");
  return Status::Ok();
}

Result<CheckpointTaken> CheckpointService::Take(const Principal& who, const std::string& sandbox_id,
                                                const std::string& name, bool keep) {
  if (name.empty()) return InvalidArgument("name", "name is required");
  ASSIGN_OR_RETURN(store::SandboxRecord r, Owned(who, sandbox_id, name));
  auto kept = runtime_.ListNamedCheckpoints(sandbox_id);
  for (const auto& c : kept)
    if (c.name == name)
      return Conflict("sandbox " + sandbox_id + " already has a checkpoint '" + name + "'");
  if (kept.size() >= kMaxCheckpointsPerSandbox)
    return Status(Code::kResourceExhausted, "a sandbox keeps at most " +
                                                std::to_string(kMaxCheckpointsPerSandbox) +
                                                " checkpoints; delete one first");
  RETURN_IF_ERROR(CheckStorage(who.org_id, true));
  CheckpointTaken out;
  RETURN_IF_ERROR(
      lifecycle_.TakeNamedCheckpoint(who.org_id, sandbox_id, name, &out.operation_id, keep));
  for (const auto& c : runtime_.ListNamedCheckpoints(sandbox_id))
    if (c.name == name) out.checkpoint = ToView(c, sandbox_id);
  if (Status over = CheckStorage(who.org_id, false); !over.ok()) {
    IgnoreError(runtime_.DeleteNamedCheckpoint(sandbox_id, name),
                "the checkpoint passed the limit; the refusal is what is reported");
    return over;
  }
  return out;
}

Result<std::vector<Checkpoint>> CheckpointService::List(const Principal& who,
                                                        const std::string& sandbox_id) {
  RETURN_IF_ERROR(Owned(who, sandbox_id, "", true).status());
  std::vector<Checkpoint> out;
  for (const auto& c : runtime_.ListNamedCheckpoints(sandbox_id))
    out.push_back(ToView(c, sandbox_id));
  return out;
}

Status CheckpointService::Delete(const Principal& who, const std::string& sandbox_id,
                                 const std::string& name) {
  RETURN_IF_ERROR(Owned(who, sandbox_id, name, true).status());
  return runtime_.DeleteNamedCheckpoint(sandbox_id, name);
}

Result<PowerChange> CheckpointService::Restore(const Principal& who, const std::string& sandbox_id,
                                               const std::string& name) {
  RETURN_IF_ERROR(Owned(who, sandbox_id, name).status());
  PowerChange out;
  RETURN_IF_ERROR(
      lifecycle_.RestoreNamedCheckpoint(who.org_id, sandbox_id, name, &out.operation_id).status());
  ASSIGN_OR_RETURN(out.sandbox, sandboxes_.Get(who, sandbox_id));
  return out;
}

}  // namespace adapt::core
