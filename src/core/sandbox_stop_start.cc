// SandboxLifecycle's stop and start (see sandbox_hibernation.h for the states).
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

Result<store::SandboxRecord> SandboxLifecycle::Stop(const std::string& org_id,
                                                    const std::string& id, bool restart,
                                                    std::string* operation_id,
                                                    const std::string& reason, WhenBusy when_busy) {
  // A client's stop reads first, without the lock: another organization's sandbox is NotFound
  // and one that is not running says so, never that it is busy. Checked again under the lock.
  if (when_busy == WhenBusy::kRefuse) {
    ASSIGN_OR_RETURN(store::SandboxRecord seen, store_.GetSandbox(org_id, id));
    RETURN_IF_ERROR(CheckStoppable(seen));
  }
  ASSIGN_OR_RETURN(SandboxHold hold, Hold(id, when_busy));
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckStoppable(r));
  // A checkpoint left from an earlier life of the sandbox is not this one's.
  runtime_.DiscardCheckpoint(id);
  Hibernation h;
  h.phase = HibernationPhase::kStopping;
  h.workspace_kept = KeepsWorkspace(r);
  h.stopped_at = NowMillis();
  h.restart = restart;
  h.note = reason;
  if (restart) h.note = "restarted to pick up a new environment; the processes ended";
  r.status = "hibernated";
  WriteHibernation(r, h);
  // The operation is written before the transition: a crash between the two leaves an open
  // operation of a running sandbox, which reconciliation fails with that reason.
  if (!restart) {
    ASSIGN_OR_RETURN(std::string op,
                     BeginSandboxOperation(store_, org_id, id, kCheckpointOperation, "Running"));
    if (operation_id) *operation_id = op;
    ADAPT_FAULT_POINT("sandbox.stop.after_operation");
  }
  RETURN_IF_ERROR(Transition(r, {"running"}));
  ADAPT_FAULT_POINT("sandbox.stop.after_stopping");
  FinishStop(r);
  return store_.GetSandbox(org_id, id);
}

void SandboxLifecycle::FinishStop(store::SandboxRecord r) {
  Hibernation h = ReadHibernation(r);
  if (on_end_) on_end_(r.id, "the sandbox was stopped", false);
  // Endpoints stay (the ingress answers for a running sandbox only): the sandbox keeps its
  // network and address, so they work again after a start.
  if (h.workspace_kept && !h.restart) {
    // A checkpoint that completed before a crash is as good as a new one.
    if (runtime_.HasCheckpoint(r.id)) {
      h.processes_saved = true;
    } else {
      // New file operations are refused since the transition; those in flight are ended
      // (a save they break keeps the files only).
      EndFileTransfers(r.id);
      // A save that would fill the host's disk midway fails, and fails the saves of every
      // other sandbox with it: without the room, the processes are not saved at all.
      auto room =
          runtime_.ReserveRoomToHibernate(r.id, static_cast<uint64_t>(r.config.memory_mib) << 20);
      Status saved = room.ok() ? runtime_.Checkpoint(r.id) : room.status();
      h.processes_saved = saved.ok();
      if (!saved.ok()) {
        spdlog::warn("sandbox {}: {}", r.id, saved.message());
        std::string why = room.ok() ? RecordMessage(saved)
                                    : "the host has not the disk space to save their memory now";
        h.note = (h.note.empty() ? "" : h.note + "; ") + "the processes could not be saved (" +
                 why + "); the files are kept and a start boots the sandbox afresh";
      }
    }
  }
  ADAPT_FAULT_POINT("sandbox.stop.after_checkpoint");
  // The network stays: it is fixed at creation and a restore needs the same one.
  Status released = runtime_.Destroy(r.id, h.workspace_kept);
  if (!released.ok()) {
    // Stays stopping; a restart of adaptd finishes it.
    spdlog::error("sandbox {}: stopping: {}", r.id, released.message());
    return;
  }
  ADAPT_FAULT_POINT("sandbox.stop.after_release");
  h.phase = HibernationPhase::kStopped;
  WriteHibernation(r, h);
  WarnIfError(Transition(r, {"hibernated"}), "sandbox " + r.id + ": recording that it stopped");
  SettleSandboxOperations(store_, store_, r.id, runtime_.CheckpointBytes(r.id));
}

Result<store::SandboxRecord> SandboxLifecycle::BeginStart(const std::string& org_id,
                                                          const std::string& id,
                                                          const store::SandboxLimits& limits,
                                                          std::string* operation_id) {
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckStartable(r));
  Hibernation h = ReadHibernation(r);
  h.phase = HibernationPhase::kStarting;
  WriteHibernation(r, h);
  r.status = "provisioning";
  r.error.clear();
  // Before the transition, as a stop's (a crash between them is reconciled the same way).
  if (operation_id) {
    ASSIGN_OR_RETURN(*operation_id, BeginSandboxOperation(store_, org_id, id, kRestoreOperation,
                                                          "Pending", runtime_.CheckpointBytes(id)));
    ADAPT_FAULT_POINT("sandbox.start.after_operation");
  }
  RETURN_IF_ERROR(Transition(r, {"hibernated"}, limits));
  ADAPT_FAULT_POINT("sandbox.start.after_starting");
  return r;
}

Status SandboxLifecycle::LaunchChecked(const std::string& id, const runtime::LaunchRequest& req) {
  RETURN_IF_ERROR(runtime_.Launch(req));
  auto obs = runtime_.Observe(id);
  Status st = obs.ok() ? Status::Ok() : obs.status();
  if (obs.ok() && obs->state.phase == runtime::ShimPhase::kLaunchFailed)
    st = Internal(obs->state.error);
  if (!st.ok())
    IgnoreError(runtime_.Destroy(id, true), "undoing a failed launch, whose error is reported");
  return st;
}

Status SandboxLifecycle::LaunchOrRestore(store::SandboxRecord& r, runtime::LaunchRequest& req) {
  auto launch = [&]() { return LaunchChecked(r.id, req); };
  Hibernation h = ReadHibernation(r);
  if (h.phase == HibernationPhase::kStarting) {
    MarkSandboxOperationsRunning(store_, r.id, kRestoreOperation);
    MarkSandboxOperationsRunning(store_, r.id, kForkOperation);
  }
  // A fork's first start copies its checkpoint in (later ones find its disk and skip it).
  if (h.phase == HibernationPhase::kStarting && r.config.forked_from) {
    const auto& from = *r.config.forked_from;
    // Held while the checkpoint is copied, so that copies under way at once never count the
    // same free space (the fork was checked against it when it was asked for, too).
    auto room = runtime_.ReserveRoomToReinstate(from.sandbox_id, from.checkpoint);
    Status seeded = room.ok() ? runtime_.SeedFromCheckpoint(r.id, from.sandbox_id, from.checkpoint)
                              : room.status();
    ADAPT_FAULT_POINT("sandbox.fork.after_seed");
    if (!seeded.ok())
      return seeded.WithContext("the fork could not be made from checkpoint '" + from.checkpoint +
                                "' of sandbox " + from.sandbox_id);
  }
  if (h.phase == HibernationPhase::kStarting && h.workspace_kept && runtime_.HasCheckpoint(r.id)) {
    req.restore = true;
    Status restored = launch();
    ADAPT_FAULT_POINT("sandbox.start.after_restore");
    if (restored.ok()) return restored;
    // The files are on the disk still: booting from them beats leaving the sandbox stuck.
    spdlog::warn("sandbox {}: {}; booting it afresh from its disk", r.id, restored.message());
    std::string why = "the checkpoint could not be restored (" + RecordMessage(restored) +
                      "); the sandbox boots afresh from its disk, its processes lost";
    FailSandboxOperations(store_, r.id, kRestoreOperation, why);
    FailSandboxOperations(store_, r.id, kForkOperation, why);
    runtime_.DiscardCheckpoint(r.id);
    req.restore = false;
  }
  return launch();
}

void SandboxLifecycle::ReconcileHibernation(const store::SandboxRecord& r, bool running) {
  Hibernation h = ReadHibernation(r);
  if (r.status == "provisioning") {
    // A start was interrupted.
    if (running) {
      store::SandboxRecord next = r;
      next.status = "running";
      WriteHibernation(next, Hibernation{});
      if (r.config.startup)
        if (auto obs = runtime_.Observe(r.id); obs.ok())
          next.result.started_at = FormatRfc3339(obs->state.started_at);
      if (Transition(next, {"provisioning"}).ok()) runtime_.DiscardCheckpoint(r.id);
      spdlog::info("sandbox {}: start finished after restart", r.id);
      return;
    }
    // Undo: back to stopped, checkpoint and disk as they were.
    Status st = runtime_.Destroy(r.id, h.workspace_kept);
    if (!st.ok()) spdlog::warn("sandbox {}: {}", r.id, st.message());
    store::SandboxRecord next = r;
    next.status = "hibernated";
    h.phase = HibernationPhase::kStopped;
    WriteHibernation(next, h);
    WarnIfError(Transition(next, {"provisioning"}), "sandbox " + r.id + ": undoing its start");
    spdlog::info("sandbox {}: interrupted start undone; it is stopped", r.id);
    return;
  }
  if (h.phase == HibernationPhase::kStopped) {
    // Release whatever a crash left behind (mounts, cgroups); keep disk and checkpoint.
    Status st = runtime_.Destroy(r.id, h.workspace_kept);
    if (!st.ok()) spdlog::warn("sandbox {}: {}", r.id, st.message());
    return;
  }
  // A stop was interrupted: finish it (the checkpoint is taken now if the sandbox still
  // runs and none completed before).
  auto lock = LockFor(r.id);
  std::lock_guard guard(*lock);
  store::SandboxRecord next = r;
  if (h.phase != HibernationPhase::kStopping) {
    h.phase = HibernationPhase::kStopping;
    WriteHibernation(next, h);
  }
  FinishStop(next);
  spdlog::info("sandbox {}: interrupted stop finished", r.id);
}

}  // namespace adapt::core
