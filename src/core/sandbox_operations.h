// The records of a sandbox's checkpoint and restore operations, written by SandboxLifecycle
// beside the transitions they describe. An operation is finished from the state its
// sandbox settled in (SettleSandboxOperations), so that whatever ended the work (its own end,
// a failure, a delete, or a restart of adaptd and reconciliation) finishes the operation too:
// none stays Pending or Running once its sandbox has left the stop or start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/operation_store.h"
#include "store/sandbox_store.h"

namespace adapt::core {

// Records a new operation of `kind` on sandbox `sandbox_id` in `phase` and returns its id.
// `checkpoint`: a roll back's named checkpoint, which a restart needs to finish it.
Result<std::string> BeginSandboxOperation(store::OperationStore& ops, const std::string& org_id,
                                          const std::string& sandbox_id, const std::string& kind,
                                          const std::string& phase, uint64_t total_bytes = 0,
                                          const std::string& checkpoint = "");
// Moves the sandbox's open operations of `kind` to Running.
void MarkSandboxOperationsRunning(store::OperationStore& ops, const std::string& sandbox_id,
                                  const std::string& kind);
// Fails the sandbox's open operations of `kind` with `error` (one sentence).
void FailSandboxOperations(store::OperationStore& ops, const std::string& sandbox_id,
                           const std::string& kind, const std::string& error);
// Finishes operation `id` of `org_id`: Completed with `bytes` when `error` is empty, else
// Failed with it. For the operations whose work ends within the call that began them (a
// named checkpoint, a roll back).
void FinishSandboxOperation(store::OperationStore& ops, const std::string& org_id,
                            const std::string& id, const std::string& error, uint64_t bytes);
// Conflict naming the checkpoint or roll back under way on sandbox `sandbox_id` (its container
// is being saved or replaced, so nothing can run in it meanwhile), as a busy long verb is;
// Ok when there is none, or when the store cannot say (the caller's own failure then speaks).
Status RefuseDuringCheckpointWork(store::OperationStore& ops, const std::string& sandbox_id);
// That work, as "its checkpoint operation op_..."; unset when there is none (or the store
// cannot say).
std::optional<std::string> CheckpointWorkUnderWay(store::OperationStore& ops,
                                                  const std::string& sandbox_id);
// The Conflict a client's request meets while sandbox `sandbox_id` is busy with `doing` (e.g.
// "its checkpoint operation op_..."), a long verb of the sandbox's.
Status SandboxBusy(const std::string& sandbox_id, const std::string& doing);
// Finishes the sandbox's open operations that its current record settles: a checkpoint once
// the stop has finished (Completed when the processes were saved, or there were none to save;
// Failed with the hibernation's note otherwise), a restore once the sandbox is no longer
// starting (Completed when it runs, unless it is a roll back's still Pending: one that never
// began). An operation whose sandbox is still stopping or starting
// stays open. `checkpoint_bytes`: the checkpoint's size on disk, the progress of both.
void SettleSandboxOperations(store::OperationStore& ops, store::SandboxStore& sandboxes,
                             const std::string& sandbox_id, uint64_t checkpoint_bytes);

}  // namespace adapt::core
