// SandboxLifecycle: the sandbox state machine. Each transition is written to the store
// (one transaction, with its event) before the side effect it announces, so that
// Reconcile() can finish or undo whatever a crash interrupted.
//
//   provisioning -> running -> completed | failed      (the startup command ended)
//   provisioning -> failed                             (launch failed)
//   any -> deleting -> deleted                         (delete or expiry)
//   running -> hibernated -> provisioning -> running   (stop, start: sandbox_hibernation.h)
//
// Thread-safe. Work for one sandbox is serialized by a per-sandbox lock; every method
// may block (runsc, mounts) and belongs on a worker thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/keyed_mutexes.h"
#include "core/event_bus.h"
#include "core/file_transfers.h"
#include "core/image_catalog.h"
#include "core/network_beside_launch.h"
#include "net/network_manager.h"
#include "runtime/runtime.h"
#include "storage/volume_service.h"
#include "store/store.h"

namespace adapt::core {

// How many named checkpoints one sandbox may keep.
inline constexpr size_t kMaxCheckpointsPerSandbox = 8;

// How a long verb (a stop, a named checkpoint, a roll back) meets a sandbox that another verb
// holds. kRefuse, for a client's request: Conflict at once, naming the operation under way,
// rather than hold one of the worker threads every organization's requests share for the
// minutes a checkpoint of a large sandbox takes. kWait, for adaptd's own callers (controllers,
// automations, a restart, idle hibernation), which must not lose their turn.
enum class WhenBusy { kRefuse, kWait };
// How long kRefuse waits for the lock first: what holds it that briefly (a status write, the
// monitor's look at a sandbox that ended) is not a long verb.
inline constexpr std::chrono::seconds kBusyWait{1};

class SandboxLifecycle {
 public:
  // `network` null: every sandbox runs without a network (egress "none").
  SandboxLifecycle(store::Store& store, runtime::Runtime& runtime, const ImageCatalog& images,
                   EventBus& events, net::NetworkManager* network = nullptr);

  // Boots a sandbox that is provisioning. A sandbox deleted meanwhile is left alone. An
  // exception while booting fails the sandbox with it ("internal error: ...") and is not
  // rethrown: this runs on the workers pool.
  void Provision(const std::string& id);
  // Records the end of a running sandbox whose workload exited (or whose monitor vanished)
  // and releases its compute; its disk stays until deletion. No-op while it still runs.
  void CheckRunning(const std::string& id);
  // Marks the sandbox deleting (terminationReason `reason` when it was still live) and
  // returns false when it did not exist or was already deleted.
  Result<store::SandboxRecord> BeginDelete(const std::string& org_id, const std::string& id,
                                           const std::string& reason);
  // Tears a deleting sandbox down and marks it deleted.
  void FinishDelete(const std::string& id);
  // Called with the sandbox's id whenever its compute is released (it ended or is deleted),
  // before its network is detached: its endpoints and database sessions go then. Called again
  // once a failure is recorded (the status changed: no endpoint can be made after it).
  void SetReleaseHook(std::function<void(const std::string&)> hook) {
    on_release_ = std::move(hook);
  }
  // Called with the sandbox's id and why it ends, in one sentence, once that is recorded and
  // before its compute is released: it died (`on_its_own`: out of memory, its startup command
  // ended...), or it is being deleted or stopped. Commands lost with it say why.
  void SetEndHook(
      std::function<void(const std::string& id, const std::string& why, bool on_its_own)> hook) {
    on_end_ = std::move(hook);
  }
  // Where durable sandboxes find their storage; without it they fail to provision.
  void set_volume_service(storage::VolumeService* volumes) { volumes_ = volumes; }
  // The file operations in flight, which a checkpoint or roll back waits for and a stop ends
  // (a checkpoint would break their connections: file_transfers.h); none: not waited for.
  void set_file_transfers(FileTransfers* transfers,
                          std::chrono::milliseconds wait = std::chrono::seconds(5)) {
    transfers_ = transfers;
    transfers_wait_ = wait;
  }
  // The variables that give a sandbox of `org_id` its organization's database, reached at
  // `gateway` (its veth's host end); without it a sandbox created with "database": true fails
  // to provision.
  using DatabaseEnvironment = std::function<Result<std::map<std::string, std::string>>(
      const std::string& org_id, const std::string& gateway)>;
  void set_database_environment(DatabaseEnvironment fn) { database_env_ = std::move(fn); }
  // Start-up reconciliation: adopt, finish, or tear down what the store and the runtime hold.
  void Reconcile();
  // Writes again the failures that could not be stored (a full disk): until then such a
  // sandbox would read "provisioning" forever. The monitor calls it on every tick.
  void RetryUnrecordedFailures();

  // running -> hibernated: checkpoints a durable sandbox (its processes and files come back
  // at start) or discards an instant one's writable layer; releases its compute and
  // endpoints, keeps its network. Conflict unless running. Blocking (seconds).
  // `restart`: the processes end without a checkpoint (a durable sandbox keeps its files), so
  // the start that follows boots afresh with the sandbox's current environment.
  // Unless `restart`, the stop is a checkpoint operation (sandbox_operations.h), whose id goes
  // to `operation_id`; it is finished when the stop is. `reason`, when given, is the
  // hibernation's note (why adaptd stopped it, e.g. idleness). `when_busy`: see WhenBusy.
  Result<store::SandboxRecord> Stop(const std::string& org_id, const std::string& id,
                                    bool restart = false, std::string* operation_id = nullptr,
                                    const std::string& reason = {},
                                    WhenBusy when_busy = WhenBusy::kWait);
  // hibernated -> provisioning; Provision() then restores (or boots) it. Conflict unless
  // hibernated; ResourceExhausted when its cpus or memory would pass `limits` (the plan's),
  // checked in the transaction that writes the start. With `operation_id`, the start is a
  // restore operation (Pending, Running once Provision launches it, then Completed or Failed),
  // whose id goes there.
  Result<store::SandboxRecord> BeginStart(const std::string& org_id, const std::string& id,
                                          const store::SandboxLimits& limits = {},
                                          std::string* operation_id = nullptr);

  // Copies the sandbox's writable layer to `dest` (runtime.h ExportWritableLayer) while
  // holding the sandbox, so no stop, start or delete runs meanwhile. Conflict unless
  // CheckCommittable (image_commit.h) allows it; NotFound for another organization's sandbox.
  Status ExportWritableLayer(const std::string& org_id, const std::string& id,
                             const std::string& dest);
  // Named checkpoints of a running durable sandbox (sandbox_checkpoints.cc). Each holds the
  // sandbox's lock throughout (`when_busy`: see WhenBusy) and records an operation (checkpoint
  // or restore, id to `operation_id`) that is finished when it returns. The sandbox is running
  // again at the end, or failed when even a fresh boot from its disk failed; a kill of adaptd
  // midway leaves it running, or stopped with its disk, after reconciliation. Conflict unless
  // running; NotFound for another organization's sandbox; Unavailable, before anything is
  // touched, when the host lacks the room the copies need (Runtime::ReserveCheckpointRoom).
  // Blocking (minutes for a large sandbox: runsc, and a copy of the disk).
  // Saves processes, memory and disk as `name` and resumes the sandbox. When runsc cannot
  // save it (its processes are then gone) the sandbox boots afresh from its disk and the
  // error says so; nothing is kept. `keep`: the checkpoint outlives the sandbox's deletion.
  // Under the lock, Conflict when `name` is kept already and ResourceExhausted when the
  // sandbox keeps kMaxCheckpointsPerSandbox (CheckNewCheckpoint).
  // `claim`: an Idempotency-Key, written with the operation. When it is recorded already
  // (looked up under the lock, so the take that recorded it has ended) nothing is done: the
  // answer is Ok with the earlier operation's id and `*replayed` set.
  Status TakeNamedCheckpoint(const std::string& org_id, const std::string& id,
                             const std::string& name, std::string* operation_id, bool keep = false,
                             const std::optional<store::IdempotencyClaim>& claim = std::nullopt,
                             bool* replayed = nullptr, WhenBusy when_busy = WhenBusy::kRefuse);
  // Rolls the sandbox back to checkpoint `name`: its processes, memory and disk as they were
  // then. When the restore fails, the sandbox boots afresh from the checkpoint's disk and the
  // operation is Failed with why (the answer is still the sandbox). NotFound when not kept.
  Result<store::SandboxRecord> RestoreNamedCheckpoint(const std::string& org_id,
                                                      const std::string& id,
                                                      const std::string& name,
                                                      std::string* operation_id,
                                                      WhenBusy when_busy = WhenBusy::kRefuse);
  // Deletes checkpoint `name` of sandbox `id` (the caller checked it is the organization's)
  // under the sandbox's lock, as WhenBusy::kRefuse takes it: a roll back reading its files
  // meanwhile would fail and boot the sandbox afresh.
  Status DeleteNamedCheckpoint(const std::string& id, const std::string& name);
  // Conflict when sandbox `id` keeps a checkpoint `name` already, ResourceExhausted when it
  // keeps kMaxCheckpointsPerSandbox: what a take checks first, and again under the lock.
  Status CheckNewCheckpoint(const std::string& id, const std::string& name);

  // Writes the transition and wakes event streams. Conflict when the stored status is not
  // one of `expected`.
  Status Transition(const store::SandboxRecord& next, const std::vector<std::string>& expected,
                    const store::SandboxLimits& limits = {});

 private:
  // Puts the organization's database variables into `r`'s stored and in-memory env.
  Status AddDatabaseEnvironment(store::SandboxRecord& r);
  std::shared_ptr<std::timed_mutex> LockFor(const std::string& id);
  // The sandbox's lock, held while this lives (the mutex first: it outlives the lock).
  struct SandboxHold {
    std::shared_ptr<std::timed_mutex> mutex;
    std::unique_lock<std::timed_mutex> lock;
  };
  // Ok once sandbox `id` has no file operation in flight (waiting transfers_wait_ at most);
  // else Conflict saying that `verb` would break one. REQUIRES: its operation recorded.
  Status AwaitFileTransfers(const std::string& id, const std::string& verb);
  // A stop's: ends the file operations in flight in sandbox `id` (their tools, inside it)
  // rather than waiting them out, so that its save keeps the processes; a client's transfer
  // cut this way hears that the sandbox stopped. Waits transfers_wait_ at most.
  void EndFileTransfers(const std::string& id);
  // Takes the sandbox's lock for a long verb. kWait blocks until it is free; kRefuse waits
  // up to kBusyWait and is Conflict after, naming the operation under way.
  Result<SandboxHold> Hold(const std::string& id, WhenBusy when_busy);
  // A client's checkpoint or roll back (kRefuse) reads its sandbox first, without the lock:
  // another organization's is NotFound and one that cannot be checkpointed says why, never
  // that it is busy. The verb checks again under the lock.
  Status CheckBeforeHold(const std::string& org_id, const std::string& id, WhenBusy when_busy);
  // Provision's work, under the sandbox's lock.
  void ProvisionLocked(const std::string& id);
  void Fail(store::SandboxRecord r, const std::string& error,
            const std::vector<std::string>& expected);
  void RecordExit(store::SandboxRecord r, const runtime::Observation& obs);
  // The launch request of sandbox `r` (image, startup, storage), with its network being made
  // (or re-used) beside the launch: the request's complete_spec waits for it and, when `r`
  // asks for the database, adds its variables to `r`, which must outlive the launches.
  Result<PreparedLaunch> PrepareLaunch(store::SandboxRecord& r);
  // What complete_spec adds, once the network is attached.
  Result<NetworkedSpec> CompleteNetworkedSpec(store::SandboxRecord& r, const Image& image,
                                              const NetworkBesideLaunch& network);
  // Launches a running sandbox again after its compute was released: from its checkpoint
  // when it has one, else (or when that fails) afresh from its disk. Fails the sandbox when
  // neither works. Returns why the processes could not be restored (empty: restored).
  // REQUIRES: the sandbox's lock held.
  std::string Relaunch(store::SandboxRecord r);
  // Stops the sandbox's compute (runtime.Destroy) and removes its network.
  Status Release(const std::string& id, bool keep_disk);
  // The side effects of a stop recorded as phase stopping, then phase stopped. Called with
  // the sandbox's lock held (also by Reconcile).
  void FinishStop(store::SandboxRecord r);
  // Launches sandbox `id` from `req` and checks that it came up; a failed launch is destroyed
  // again (its disk kept), so the caller can try otherwise. Blocking.
  Status LaunchChecked(const std::string& id, const runtime::LaunchRequest& req);
  // Launches a provisioning sandbox: restores its checkpoint when it is starting from one
  // (falling back to a fresh boot from its disk), else boots it.
  Status LaunchOrRestore(store::SandboxRecord& r, runtime::LaunchRequest& req);
  // Reconcile() for a hibernated sandbox, or one that was starting.
  void ReconcileHibernation(const store::SandboxRecord& r, bool alive);
  // Reconcile() for a running durable sandbox whose compute is gone: a named checkpoint or
  // roll back the crash interrupted is resumed from the checkpoint image on disk, a roll back
  // whose named checkpoint is still kept is finished, and otherwise the sandbox is left
  // stopped (hibernated) with its disk. Returns false when neither was under way (the sandbox
  // just ended).
  bool ResumeInterruptedCheckpoint(const store::SandboxRecord& r);
  // Puts checkpoint `name` back and resumes the sandbox from it; false (nothing done) when
  // the name is unknown or the checkpoint is gone or cannot be restored here.
  bool FinishInterruptedRollBack(const store::SandboxRecord& r, const std::string& name);

  store::Store& store_;
  runtime::Runtime& runtime_;
  const ImageCatalog& images_;
  EventBus& events_;
  net::NetworkManager* network_;
  storage::VolumeService* volumes_ = nullptr;
  FileTransfers* transfers_ = nullptr;
  // How long a checkpoint or roll back waits for the sandbox's file operations to end: a
  // client's is refused after (the sandbox untouched), a stop goes on.
  std::chrono::milliseconds transfers_wait_{0};
  DatabaseEnvironment database_env_;
  std::function<void(const std::string&)> on_release_;
  std::function<void(const std::string&, const std::string&, bool)> on_end_;
  KeyedMutexes<std::timed_mutex> locks_;
  // Sandbox id -> the failure Fail() could not store yet.
  std::mutex unrecorded_mu_;
  std::map<std::string, std::string> unrecorded_;
};

}  // namespace adapt::core
