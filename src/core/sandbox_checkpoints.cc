// SandboxLifecycle's named checkpoints: a running sandbox is checkpointed and resumed (what
// runsc's --leave-running would do; this runsc's restores the sandbox without its network
// and under the checkpoint command's stdio, so adaptd restores it itself, as a start does),
// or rolled back to a checkpoint it kept. The checkpoint itself is the stop's
// (Runtime::Checkpoint); the relaunch is the start's (PrepareLaunch, Launch with restore).
#include <optional>

#include "base/fault_point.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "core/operation.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_lifecycle.h"
#include "core/sandbox_operations.h"

namespace adapt::core {
namespace {

Status CheckCheckpointable(const store::SandboxRecord& r) {
  if (r.status != "running")
    return Conflict("sandbox " + r.id + " is " + r.status +
                    "; only a running sandbox has checkpoints taken or restored");
  if (!KeepsWorkspace(r))
    return Conflict("sandbox " + r.id +
                    " is instant (startupClass instant keeps no checkpoint); create it with "
                    "startupClass durable to take checkpoints");
  return Status::Ok();
}

}  // namespace

std::string SandboxLifecycle::Relaunch(store::SandboxRecord r) {
  auto launch = [&](const runtime::LaunchRequest& req) { return LaunchChecked(r.id, req); };
  auto prepared = PrepareLaunch(r);
  Status st = prepared.status();
  std::string lost;
  if (st.ok() && runtime_.HasCheckpoint(r.id)) {
    prepared->request.restore = true;
    st = launch(prepared->request);
    ADAPT_FAULT_POINT("sandbox.checkpoint.after_restore");
    if (!st.ok()) {
      lost = "the checkpoint could not be restored (" + st.message() +
             "); the sandbox booted afresh from its disk, its processes lost";
      spdlog::warn("sandbox {}: {}", r.id, lost);
      prepared->request.restore = false;
      st = launch(prepared->request);
    }
  } else if (st.ok()) {
    lost = "the sandbox had no checkpoint to restore; it booted afresh from its disk";
    st = launch(prepared->request);
  }
  runtime_.DiscardCheckpoint(r.id);
  if (!st.ok()) {
    if (prepared.ok()) prepared->WaitForNetwork();  // the release below removes it
    WarnIfError(Release(r.id, true), "sandbox " + r.id + ": releasing after a failed launch");
    Fail(r, "the sandbox could not be resumed after a checkpoint: " + st.message(), {"running"});
    return lost.empty() ? "the sandbox could not be resumed: " + st.message() : lost;
  }
  return lost;
}

Status SandboxLifecycle::TakeNamedCheckpoint(const std::string& org_id, const std::string& id,
                                             const std::string& name, std::string* operation_id,
                                             bool keep) {
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckCheckpointable(r));
  ASSIGN_OR_RETURN(std::string op,
                   BeginSandboxOperation(store_, org_id, id, kCheckpointOperation, "Running"));
  if (operation_id) *operation_id = op;
  ADAPT_FAULT_POINT("sandbox.checkpoint.after_operation");
  runtime_.DiscardCheckpoint(id);
  if (on_end_)
    on_end_(id, "a checkpoint of the sandbox was taken; its commands are no longer followed",
            false);
  Status saved = runtime_.Checkpoint(id);
  ADAPT_FAULT_POINT("sandbox.checkpoint.after_runsc");
  // Released either way: a refused save has torn the sandbox down already.
  Status released = runtime_.Destroy(id, true);
  if (saved.ok() && !released.ok()) saved = released;
  uint64_t bytes = 0;
  if (saved.ok()) {
    saved = runtime_.KeepCheckpoint(id, name, keep);
    ADAPT_FAULT_POINT("sandbox.checkpoint.after_keep");
    for (const auto& kept : runtime_.ListNamedCheckpoints(id))
      if (kept.name == name) bytes = kept.bytes;
  }
  std::string lost = Relaunch(r);
  std::string error;
  if (!saved.ok()) {
    error = "checkpoint '" + name + "' could not be taken: " + saved.message();
    if (!lost.empty()) error += "; " + lost;
  }
  FinishSandboxOperation(store_, org_id, op, error, bytes);
  if (!error.empty()) return Status(saved.code(), error);
  return Status::Ok();
}

Result<store::SandboxRecord> SandboxLifecycle::RestoreNamedCheckpoint(const std::string& org_id,
                                                                      const std::string& id,
                                                                      const std::string& name,
                                                                      std::string* operation_id) {
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckCheckpointable(r));
  std::optional<runtime::NamedCheckpoint> kept;
  for (const auto& c : runtime_.ListNamedCheckpoints(id))
    if (c.name == name) kept = c;
  if (!kept) return NotFound("sandbox " + id + " has no checkpoint '" + name + "'");
  // Another runsc's or platform's checkpoint is refused while the sandbox still runs.
  if (!kept->incompatibility.empty()) return Status(Code::kUnsupported, kept->incompatibility);
  if (on_end_) on_end_(id, "the sandbox was rolled back to checkpoint '" + name + "'", false);
  // The compute goes before the operation is written: an operation on record means the old
  // processes are gone, so a crash after it can only leave the sandbox rolled back or failed.
  RETURN_IF_ERROR(runtime_.Destroy(id, true).WithContext("stopping sandbox " + id));
  ASSIGN_OR_RETURN(std::string op,
                   BeginSandboxOperation(store_, org_id, id, kRestoreOperation, "Running"));
  if (operation_id) *operation_id = op;
  ADAPT_FAULT_POINT("sandbox.rollback.after_operation");
  Status reinstated = runtime_.ReinstateCheckpoint(id, name);
  ADAPT_FAULT_POINT("sandbox.rollback.after_reinstate");
  std::string lost = Relaunch(r);
  std::string error;
  if (!reinstated.ok())
    error = reinstated.message() + (lost.empty() ? "" : "; " + lost);
  else if (!lost.empty())
    error = lost;
  uint64_t bytes = 0;
  for (const auto& c : runtime_.ListNamedCheckpoints(id))
    if (c.name == name) bytes = c.bytes;
  FinishSandboxOperation(store_, org_id, op, error, bytes);
  return store_.GetSandbox(org_id, id);
}

}  // namespace adapt::core
