#include "core/sandbox_operations.h"

#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "core/operation.h"
#include "core/sandbox_hibernation.h"

namespace adapt::core {
namespace {

void Save(store::OperationStore& ops, const store::OperationRecord& op) {
  WarnIfError(ops.PutOperation(op), "operation " + op.id + " of sandbox " + op.sandbox_id);
}

void Finish(store::OperationStore& ops, store::OperationRecord op, const std::string& error,
            uint64_t bytes) {
  op.phase = error.empty() ? "Completed" : "Failed";
  op.error = error;
  op.finished_at = NowMillis();
  if (error.empty()) {
    op.bytes = bytes;
    if (op.total_bytes < bytes) op.total_bytes = bytes;
  }
  Save(ops, op);
}

// Why a checkpoint ended as it did, or nullopt while the stop goes on.
std::optional<std::string> CheckpointOutcome(const store::SandboxRecord& r) {
  Hibernation h = ReadHibernation(r);
  if (r.status == "hibernated") {
    if (h.phase == HibernationPhase::kStopping) return std::nullopt;
    if (h.processes_saved || !h.workspace_kept) return std::string();
    return h.note.empty() ? std::string("the processes could not be saved") : h.note;
  }
  if (r.status == "running")
    return std::string(
        "the checkpoint was interrupted (adaptd restarted); the sandbox is still running");
  return "the sandbox is " + r.status;
}

// Why a restore ended as it did, or nullopt while the start goes on. A start's operation is
// Running before the launch; a roll back's once the old compute is gone, so a running
// sandbox with a Pending one was never touched.
std::optional<std::string> RestoreOutcome(const store::SandboxRecord& r,
                                          const store::OperationRecord& op) {
  if (r.status == "provisioning") return std::nullopt;
  if (r.status == "running" && op.phase == "Pending")
    return std::string(
        "the roll back was interrupted (adaptd restarted) before it began; the sandbox is "
        "still running as it was");
  if (r.status == "running") return std::string();
  if (r.status == "hibernated")
    return std::string(
        "the start was interrupted (adaptd restarted); the sandbox is stopped (hibernated) "
        "with its checkpoint kept: start it again");
  if (r.status == "failed")
    return "the sandbox failed to start" + (r.error.empty() ? "" : ": " + r.error);
  return "the sandbox is " + r.status;
}

}  // namespace

Result<std::string> BeginSandboxOperation(store::OperationStore& ops, const std::string& org_id,
                                          const std::string& sandbox_id, const std::string& kind,
                                          const std::string& phase, uint64_t total_bytes,
                                          const std::string& checkpoint) {
  store::OperationRecord op;
  op.id = NewId("op");
  op.org_id = org_id;
  op.kind = kind;
  op.sandbox_id = sandbox_id;
  op.phase = phase;
  op.total_bytes = total_bytes;
  op.checkpoint = checkpoint;
  op.started_at = NowMillis();
  RETURN_IF_ERROR(ops.PutOperation(op).WithContext("recording the " + kind + " operation"));
  return op.id;
}

void MarkSandboxOperationsRunning(store::OperationStore& ops, const std::string& sandbox_id,
                                  const std::string& kind) {
  auto open = ops.ListOpenOperations(sandbox_id);
  if (!open.ok()) return spdlog::warn("sandbox {}: {}", sandbox_id, open.status().message());
  for (auto op : *open) {
    if (op.kind != kind || op.phase == "Running") continue;
    op.phase = "Running";
    Save(ops, op);
  }
}

void FailSandboxOperations(store::OperationStore& ops, const std::string& sandbox_id,
                           const std::string& kind, const std::string& error) {
  auto open = ops.ListOpenOperations(sandbox_id);
  if (!open.ok()) return spdlog::warn("sandbox {}: {}", sandbox_id, open.status().message());
  for (const auto& op : *open)
    if (op.kind == kind) Finish(ops, op, error, 0);
}

void FinishSandboxOperation(store::OperationStore& ops, const std::string& org_id,
                            const std::string& id, const std::string& error, uint64_t bytes) {
  auto op = ops.GetOperation(org_id, id);
  if (!op.ok()) return spdlog::warn("operation {}: {}", id, op.status().message());
  Finish(ops, *op, error, bytes);
}

void SettleSandboxOperations(store::OperationStore& ops, store::SandboxStore& sandboxes,
                             const std::string& sandbox_id, uint64_t checkpoint_bytes) {
  auto open = ops.ListOpenOperations(sandbox_id);
  if (!open.ok()) return spdlog::warn("sandbox {}: {}", sandbox_id, open.status().message());
  if (open->empty()) return;
  auto r = sandboxes.GetSandbox("", sandbox_id);
  for (const auto& op : *open) {
    // Only a sandbox's own operations: an app deploy's is AppService's to settle.
    if (op.kind != kCheckpointOperation && op.kind != kRestoreOperation &&
        op.kind != kForkOperation)
      continue;
    std::optional<std::string> outcome;
    if (!r.ok())
      outcome = "the sandbox is gone";
    else
      outcome = op.kind == kCheckpointOperation ? CheckpointOutcome(*r) : RestoreOutcome(*r, op);
    if (outcome) Finish(ops, op, *outcome, checkpoint_bytes);
  }
}

Status SandboxBusy(const std::string& sandbox_id, const std::string& doing) {
  return Conflict("sandbox " + sandbox_id + " is busy with " + doing +
                  ", which may take minutes; retry once it has ended");
}

std::optional<std::string> CheckpointWorkUnderWay(store::OperationStore& ops,
                                                  const std::string& sandbox_id) {
  auto open = ops.ListOpenOperations(sandbox_id);
  if (!open.ok()) return std::nullopt;
  // A named checkpoint, or a roll back (a restore naming its checkpoint). Not a start's
  // restore: the sandbox runs a moment before that operation is settled, and what waited for
  // it to run must not meet it.
  for (const auto& op : *open)
    if (op.kind == kCheckpointOperation || (op.kind == kRestoreOperation && !op.checkpoint.empty()))
      return "its " + op.kind + " operation " + op.id;
  return std::nullopt;
}

Status RefuseDuringCheckpointWork(store::OperationStore& ops, const std::string& sandbox_id) {
  auto doing = CheckpointWorkUnderWay(ops, sandbox_id);
  return doing ? SandboxBusy(sandbox_id, *doing) : Status::Ok();
}

}  // namespace adapt::core
