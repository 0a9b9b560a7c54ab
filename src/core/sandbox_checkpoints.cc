// SandboxLifecycle's named checkpoints: a running sandbox is checkpointed and resumed (what
// runsc's --leave-running would do; this runsc's restores the sandbox without its network
// and under the checkpoint command's stdio, so adaptd restores it itself, as a start does),
// or rolled back to a checkpoint it kept. The checkpoint itself is the stop's
// (Runtime::Checkpoint); the relaunch is the start's (PrepareLaunch, Launch with restore).
#include <optional>

#include "base/client_message.h"
#include "base/fault_point.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
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
      lost = "the checkpoint could not be restored (" + RecordMessage(st) +
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
    // One reference for the one failure, in the sandbox's record and the caller's sentence.
    std::string why = RecordMessage(st);
    Fail(r, "the sandbox could not be resumed after a checkpoint: " + why, {"running"});
    return lost.empty() ? "the sandbox could not be resumed: " + why : lost;
  }
  return lost;
}

Status SandboxLifecycle::CheckBeforeHold(const std::string& org_id, const std::string& id,
                                         WhenBusy when_busy) {
  if (when_busy != WhenBusy::kRefuse) return Status::Ok();
  ASSIGN_OR_RETURN(store::SandboxRecord seen, store_.GetSandbox(org_id, id));
  return CheckCheckpointable(seen);
}

Status SandboxLifecycle::CheckNewCheckpoint(const std::string& id, const std::string& name) {
  auto kept = runtime_.ListNamedCheckpoints(id);
  for (const auto& c : kept)
    if (c.name == name)
      return Conflict("sandbox " + id + " already has a checkpoint '" + name + "'");
  if (kept.size() >= kMaxCheckpointsPerSandbox)
    return Status(Code::kResourceExhausted, "a sandbox keeps at most " +
                                                std::to_string(kMaxCheckpointsPerSandbox) +
                                                " checkpoints; delete one first");
  return Status::Ok();
}

Status SandboxLifecycle::DeleteNamedCheckpoint(const std::string& id, const std::string& name) {
  ASSIGN_OR_RETURN(SandboxHold hold, Hold(id, WhenBusy::kRefuse));
  return runtime_.DeleteNamedCheckpoint(id, name);
}

Status SandboxLifecycle::TakeNamedCheckpoint(const std::string& org_id, const std::string& id,
                                             const std::string& name, std::string* operation_id,
                                             bool keep,
                                             const std::optional<store::IdempotencyClaim>& claim,
                                             bool* replayed, WhenBusy when_busy) {
  RETURN_IF_ERROR(CheckBeforeHold(org_id, id, when_busy));
  ASSIGN_OR_RETURN(SandboxHold hold, Hold(id, when_busy));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) {
      if (operation_id) *operation_id = *earlier;
      if (replayed) *replayed = true;
      return Status::Ok();
    }
  }
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckCheckpointable(r));
  // Again under the lock: takes with other names may have been kept since the caller looked.
  RETURN_IF_ERROR(CheckNewCheckpoint(id, name));
  // Held until the copies are done; the sandbox is untouched when the host lacks the room.
  ASSIGN_OR_RETURN(
      std::shared_ptr<void> room,
      runtime_.ReserveRoomToCheckpoint(id, static_cast<uint64_t>(r.config.memory_mib) << 20));
  auto begin = [&] {
    return BeginSandboxOperation(store_, org_id, id, kCheckpointOperation, "Running");
  };
  std::string op;
  if (claim) {
    // Not a replay: the key was looked up above under the sandbox's lock, which this holds.
    ASSIGN_OR_RETURN(store::IdempotentCreate made, store_.CreateOnce(*claim, begin));
    op = made.object_id;
  } else {
    ASSIGN_OR_RETURN(op, begin());
  }
  if (operation_id) *operation_id = op;
  ADAPT_FAULT_POINT("sandbox.checkpoint.after_operation");
  if (Status quiet = AwaitFileTransfers(id, "a checkpoint"); !quiet.ok()) {
    FinishSandboxOperation(store_, org_id, op, quiet.message(), 0);
    return quiet;
  }
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
    error = "checkpoint '" + name + "' could not be taken: " + RecordMessage(saved);
    if (!lost.empty()) error += "; " + lost;
  }
  FinishSandboxOperation(store_, org_id, op, error, bytes);
  if (!error.empty()) return Status(saved.code(), error);
  return Status::Ok();
}

Result<store::SandboxRecord> SandboxLifecycle::RestoreNamedCheckpoint(const std::string& org_id,
                                                                      const std::string& id,
                                                                      const std::string& name,
                                                                      std::string* operation_id,
                                                                      WhenBusy when_busy) {
  RETURN_IF_ERROR(CheckBeforeHold(org_id, id, when_busy));
  ASSIGN_OR_RETURN(SandboxHold hold, Hold(id, when_busy));
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckCheckpointable(r));
  std::optional<runtime::NamedCheckpoint> kept;
  for (const auto& c : runtime_.ListNamedCheckpoints(id))
    if (c.name == name) kept = c;
  if (!kept) return NotFound("sandbox " + id + " has no checkpoint '" + name + "'");
  // Another runsc's or platform's checkpoint is refused while the sandbox still runs.
  if (!kept->incompatibility.empty()) return Status(Code::kUnsupported, kept->incompatibility);
  ASSIGN_OR_RETURN(std::shared_ptr<void> room, runtime_.ReserveRoomToReinstate(id, name));
  // The operation is the roll back's intent, written before the compute goes. Pending, a
  // crash leaves the sandbox running as it was; Running, the old processes are gone and the
  // restart resumes the sandbox from the checkpoint put back, or, before it is back, keeps
  // it stopped (hibernated) with its disk (ResumeInterruptedCheckpoint) when the checkpoint
  // has gone meanwhile.
  ASSIGN_OR_RETURN(std::string op, BeginSandboxOperation(store_, org_id, id, kRestoreOperation,
                                                         "Pending", 0, name));
  if (operation_id) *operation_id = op;
  ADAPT_FAULT_POINT("sandbox.rollback.after_operation");
  if (Status quiet = AwaitFileTransfers(id, "a roll back"); !quiet.ok()) {
    FinishSandboxOperation(store_, org_id, op, quiet.message(), 0);
    return quiet;
  }
  if (on_end_) on_end_(id, "the sandbox was rolled back to checkpoint '" + name + "'", false);
  Status stopped = runtime_.Destroy(id, true).WithContext("stopping sandbox " + id);
  if (!stopped.ok()) {
    FinishSandboxOperation(store_, org_id, op, RecordMessage(stopped), 0);
    return stopped;
  }
  MarkSandboxOperationsRunning(store_, id, kRestoreOperation);
  ADAPT_FAULT_POINT("sandbox.rollback.after_release");
  Status reinstated = runtime_.ReinstateCheckpoint(id, name);
  ADAPT_FAULT_POINT("sandbox.rollback.after_reinstate");
  std::string lost = Relaunch(r);
  std::string error;
  if (!reinstated.ok())
    error = RecordMessage(reinstated) + (lost.empty() ? "" : "; " + lost);
  else if (!lost.empty())
    error = lost;
  uint64_t bytes = 0;
  for (const auto& c : runtime_.ListNamedCheckpoints(id))
    if (c.name == name) bytes = c.bytes;
  FinishSandboxOperation(store_, org_id, op, error, bytes);
  return store_.GetSandbox(org_id, id);
}

bool SandboxLifecycle::ResumeInterruptedCheckpoint(const store::SandboxRecord& r) {
  bool image = runtime_.HasCheckpoint(r.id);
  std::optional<std::string> kind;
  std::string rolling_back_to;  // the named checkpoint of an interrupted roll back
  if (auto open = store_.ListOpenOperations(r.id); open.ok()) {
    for (const auto& op : *open)
      if (op.kind == kCheckpointOperation || op.kind == kRestoreOperation) {
        kind = op.kind;
        rolling_back_to = op.kind == kRestoreOperation ? op.checkpoint : "";
      }
  } else {
    spdlog::warn("sandbox {}: {}", r.id, open.status().message());
  }
  if (!image && !kind) return false;
  auto lock = LockFor(r.id);
  std::lock_guard guard(*lock);
  // What the crash left mounted goes first (the disk is mounted until the release).
  WarnIfError(runtime_.Destroy(r.id, true), "sandbox " + r.id + ": releasing leftovers");
  if (image) {
    // Interrupted between runsc (or the checkpoint put back) and the relaunch: the image on
    // disk is the sandbox's, so it resumes from it.
    std::string lost = Relaunch(r);
    spdlog::info("sandbox {}: relaunched from its checkpoint after restart{}", r.id,
                 lost.empty() ? "" : " (" + lost + ")");
    if (!lost.empty())
      FailSandboxOperations(store_, r.id, kRestoreOperation,
                            "the roll back was interrupted (adaptd restarted) and " + lost);
    return true;
  }
  if (kind == kRestoreOperation && FinishInterruptedRollBack(r, rolling_back_to)) return true;
  // The processes were stopped and are not on disk (yet): the files are, so the sandbox is
  // kept stopped with them rather than failed; the named checkpoints are untouched.
  std::string why =
      kind == kRestoreOperation
          ? "the roll back to a checkpoint was interrupted (adaptd restarted) after the "
            "sandbox's processes stopped and before the checkpoint's were restored; the "
            "sandbox is stopped with its files kept: start it and restore the checkpoint again"
          : "the checkpoint was interrupted (adaptd restarted) after the sandbox's processes "
            "stopped and before they were saved; the sandbox is stopped with its files kept: "
            "start it (it boots afresh from its disk) and take the checkpoint again";
  store::SandboxRecord next = r;
  next.status = "hibernated";
  Hibernation h;
  h.phase = HibernationPhase::kStopped;
  h.workspace_kept = true;
  h.stopped_at = NowMillis();
  h.note = why;
  WriteHibernation(next, h);
  WarnIfError(Transition(next, {"running"}), "sandbox " + r.id + ": keeping it stopped");
  FailSandboxOperations(store_, r.id, *kind, why);
  spdlog::info("sandbox {}: interrupted {} left it stopped", r.id, *kind);
  return true;
}

bool SandboxLifecycle::FinishInterruptedRollBack(const store::SandboxRecord& r,
                                                 const std::string& name) {
  if (name.empty()) return false;  // an operation recorded before roll backs named theirs
  std::optional<runtime::NamedCheckpoint> kept;
  for (const auto& c : runtime_.ListNamedCheckpoints(r.id))
    if (c.name == name) kept = c;
  if (!kept || !kept->incompatibility.empty()) return false;
  // The sandbox's processes are gone and the checkpoint is still kept: what the roll back was
  // asked for can still be done, so it is done rather than left for the user to repeat.
  Status reinstated = runtime_.ReinstateCheckpoint(r.id, name);
  if (!reinstated.ok()) {
    spdlog::warn("sandbox {}: finishing the interrupted roll back: {}", r.id, reinstated.message());
    return false;
  }
  std::string lost = Relaunch(r);
  spdlog::info("sandbox {}: interrupted roll back to '{}' finished after restart{}", r.id, name,
               lost.empty() ? "" : " (" + lost + ")");
  auto open = store_.ListOpenOperations(r.id);
  if (open.ok())
    for (const auto& op : *open)
      if (op.kind == kRestoreOperation)
        FinishSandboxOperation(store_, op.org_id, op.id,
                               lost.empty() ? ""
                                            : "the roll back was interrupted (adaptd "
                                              "restarted) and " +
                                                  lost,
                               kept->bytes);
  return true;
}

Status SandboxLifecycle::AwaitFileTransfers(const std::string& id, const std::string& verb) {
  if (!transfers_ || transfers_->AwaitNone(id, transfers_wait_)) return Status::Ok();
  return Conflict("sandbox " + id + " has a file transfer in progress, which " + verb +
                  " would break; nothing was changed: retry once it has ended");
}

void SandboxLifecycle::EndFileTransfers(const std::string& id) {
  if (!transfers_ || transfers_->AwaitNone(id, std::chrono::milliseconds(0))) return;
  spdlog::info("sandbox {}: the stop ends its file transfers in flight", id);
  // Every tool ended: the sandbox holds none of their connections, though adaptd's side of
  // a transfer may still be winding down.
  if (transfers_->Cancel(id, transfers_wait_)) return;
  IgnoreError(AwaitFileTransfers(id, "the save"), "the stop goes on");
}

}  // namespace adapt::core
