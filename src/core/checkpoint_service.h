// CheckpointService: named checkpoints of a running durable sandbox (POST/GET/DELETE
// /v1/sandboxes/{id}/checkpoints, restore in place). The checkpoints live beside the sandbox
// (Runtime::KeepCheckpoint) and go with it, unless taken with `keep`: those outlive its
// deletion, still listed, deleted and forked by the sandbox's id. What they occupy counts
// against the organization's persistent storage limit with its volumes. Another
// organization's sandbox is NotFound before anything is touched. Thread-safe; Take and
// Restore block (minutes for a large sandbox): each is refused at once rather than queued
// when its sandbox is busy with another (Conflict) or its organization has all its places of
// checkpoint work (ResourceExhausted, checkpoint_work.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/org_counter.h"
#include "core/auth.h"
#include "core/sandbox_service.h"
#include "core/usage_meter.h"

namespace adapt::core {

struct Checkpoint {
  std::string name;
  std::string sandbox_id;
  uint64_t size_bytes = 0;  // on disk: memory image and a sparse copy of the disk
  int64_t created_at = 0;   // ms since the epoch
  bool keep = false;        // outlives the sandbox's deletion
  // The runsc version and platform that took it; a restore or fork needs the same pair.
  std::string runsc_version;
  std::string platform;
  // Its sandbox, so that a kept checkpoint of a deleted sandbox can be told apart and found by
  // the sandbox's name when its id is forgotten.
  bool sandbox_deleted = false;
  std::map<std::string, std::string> sandbox_labels;
};

// The organization's checkpoints across its sandboxes (GET /v1/checkpoints).
struct ListCheckpointsRequest {
  int limit = kDefaultPageLimit;  // 1..kMaxPageLimit
  std::string cursor;             // the previous page's next_cursor; empty: the first page
  std::string sandbox_id;         // only this sandbox's; empty: every sandbox's
  std::optional<bool> kept;       // only those taken with keep (true) or without (false)
};

using CheckpointPage = Page<Checkpoint>;  // newest first

struct CheckpointTaken {
  Checkpoint checkpoint;
  std::string operation_id;  // its checkpoint operation, Completed
};

class CheckpointService {
 public:
  // The organization's persistent storage limit in GiB (nullopt: none), as volumes have it.
  using StorageLimit = std::function<Result<std::optional<int64_t>>(const std::string& org_id)>;

  CheckpointService(store::Store& store, runtime::Runtime& runtime, SandboxLifecycle& lifecycle,
                    SandboxService& sandboxes)
      : store_(store), runtime_(runtime), lifecycle_(lifecycle), sandboxes_(sandboxes) {}
  void set_storage_limit(StorageLimit limit) { storage_limit_ = std::move(limit); }
  // Called with a checkpoint about to be deleted by its owner and the time (millis), to charge
  // its storage up to then (UsageMeter::ChargeDeletedCheckpoint). Set before serving.
  void set_on_deleting(std::function<void(const MeteredCheckpoint&, int64_t)> fn) {
    on_deleting_ = std::move(fn);
  }
  // The places of checkpoint work each organization has (checkpoint_work.h), shared with
  // SandboxService's stops; without, no cap. Set before serving.
  void set_checkpoint_work(OrgCounter work) { work_ = std::move(work); }

  // Saves the running sandbox's processes, memory and disk as `name`; the sandbox keeps
  // running. InvalidArgument (field "name") for a name that is not a DNS label; Conflict when
  // the name is taken, the sandbox cannot be checkpointed or is busy with another stop,
  // checkpoint or roll back (see SandboxLifecycle); ResourceExhausted past
  // kMaxCheckpointsPerSandbox, the storage limit (a checkpoint that ends past it is deleted
  // again) or the organization's places of checkpoint work; Unavailable when the host lacks
  // the disk space (nothing touched).
  // `keep`: the checkpoint outlives the sandbox's deletion (until deleted itself).
  // `idempotency`: an Idempotency-Key (scope "checkpoint"), written with the checkpoint
  // operation. A replay takes nothing: it waits for the take under the key to end (holding a
  // place of checkpoint work meanwhile) and answers its checkpoint and operation; Conflict
  // when that take failed (its error), when the checkpoint has been deleted since, or for the
  // key with another request; InvalidArgument unless the key is 1 to 255 bytes.
  Result<CheckpointTaken> Take(
      const Principal& who, const std::string& sandbox_id, const std::string& name,
      bool keep = false, const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  // One newest-first page of the sandbox's checkpoints, in the order and with the cursors of
  // ListOrganization. A deleted sandbox lists the checkpoints it kept (NotFound when none).
  // InvalidArgument for a bad limit or cursor.
  Result<CheckpointPage> List(const Principal& who, const std::string& sandbox_id,
                              const PageRequest& page = {});
  // The caller's organization's checkpoints, newest first: those of its live sandboxes and
  // the kept ones of its deleted sandboxes; never another organization's (its sandbox id, or
  // an unknown one, lists nothing). InvalidArgument for a limit outside 1..200 (field
  // "limit"), a cursor this server did not issue ("cursor") or a malformed sandbox id
  // ("sandboxId"). A cursor names the last item seen, so inserts and deletes between pages
  // neither repeat nor skip the others.
  Result<CheckpointPage> ListOrganization(const Principal& who, const ListCheckpointsRequest& req);
  // Also a deleted sandbox's kept checkpoint.
  Status Delete(const Principal& who, const std::string& sandbox_id, const std::string& name);
  // Rolls the running sandbox back to `name` (its processes, memory and files as they were);
  // the answer is the sandbox and the restore operation (Failed when the processes could not
  // be restored and the sandbox booted afresh from the checkpoint's disk). Conflict, and
  // ResourceExhausted for the places of checkpoint work, as Take; Unavailable when the host
  // lacks the disk space to put the checkpoint back (the sandbox untouched).
  Result<PowerChange> Restore(const Principal& who, const std::string& sandbox_id,
                              const std::string& name);

  // What the organization's checkpoints occupy, in bytes.
  uint64_t OrgCheckpointBytes(const std::string& org_id);
  // Every organization's checkpoints, deleted sandboxes' kept ones too (UsageMeter's lister).
  std::vector<MeteredCheckpoint> AllForMetering();

 private:
  // The sandbox record of `who`'s organization, NotFound otherwise (a deleted one too, unless
  // `kept_ok` and it kept checkpoints); checks the name.
  Result<store::SandboxRecord> Owned(const Principal& who, const std::string& sandbox_id,
                                     const std::string& name, bool kept_ok = false);
  // The sandboxes whose checkpoints exist and count: live ones, and deleted ones that kept
  // some; of `org_id`, or of every organization when empty.
  std::vector<store::SandboxRecord> SandboxesWithCheckpoints(const std::string& org_id);
  // ResourceExhausted when the organization's volumes and checkpoints pass its limit
  // (`or_equal`: reaching it counts as passing, for the check before a new checkpoint).
  Status CheckStorage(const std::string& org_id, bool or_equal);
  // What the take of checkpoint `name` that recorded operation `operation_id` answered.
  Result<CheckpointTaken> TakenEarlier(const Principal& who, const std::string& sandbox_id,
                                       const std::string& name, const std::string& operation_id);

  store::Store& store_;
  runtime::Runtime& runtime_;
  SandboxLifecycle& lifecycle_;
  SandboxService& sandboxes_;
  StorageLimit storage_limit_;
  std::function<void(const MeteredCheckpoint&, int64_t)> on_deleting_;
  OrgCounter work_;
};

}  // namespace adapt::core
