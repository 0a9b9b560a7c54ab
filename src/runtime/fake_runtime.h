// FakeRuntime: a Runtime that boots nothing, for unit tests of the core. It keeps what a real
// runtime would know of each sandbox (its shim state, whether its monitor lives, its disk and
// checkpoint), records every call, and lets a test script outcomes: fail the next call of a
// kind, make a sandbox exit or its monitor vanish, or leave sandboxes behind as a crashed
// adaptd would. Exec starts no process (Unsupported unless a test scripts a failure, or a
// host process to stand in for the one in the sandbox).
// Thread-safe: the core calls it from worker threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace adapt::runtime {

class FakeRuntime : public Runtime {
 public:
  enum class Op {
    kLaunch,
    kObserve,
    kDestroy,
    kExec,
    kKillExec,
    kCheckpoint,
    kKeepCheckpoint,
    kReinstateCheckpoint,
    kSeedCheckpoint,
    kExportLayer,
    kReserveRoom  // ReserveRoomToCheckpoint, ReserveRoomToReinstate and ReserveRoomToHibernate
  };

  struct Call {
    Op op;
    std::string sandbox_id;
    bool keep_disk = false;  // Destroy's argument
    bool restore = false;    // Launch's request
  };

  // What the fake holds of one sandbox: present from its launch until a Destroy without
  // keep_disk (its files, as the real runtime's sandbox directory).
  struct Sandbox {
    ShimState state;
    bool monitor_alive = false;
    bool released = false;  // Destroy(keep_disk) ran: only the disk is left
    bool checkpoint = false;
    LaunchRequest request;               // the last launch
    std::vector<NamedCheckpoint> named;  // kept checkpoints, oldest first
    std::string reinstated;              // the named checkpoint last reinstated
    std::string seeded_from;             // "<source id>/<name>" a fork was seeded from
    OutputRing output;                   // what the workload printed (Observe shows it)
  };

  Status Launch(const LaunchRequest& request) override;
  Result<Observation> Observe(const std::string& id) override;
  Status Destroy(const std::string& id, bool keep_disk) override;
  Result<ExecProcess> Exec(const ExecRequest& request) override;
  Status KillExec(const std::string& sandbox_id, const std::string& tree_id) override;
  Status TerminateExec(const std::string& sandbox_id, const std::string& tree_id) override;
  Status SignalExec(const std::string& sandbox_id, const std::string& tree_id, int signal) override;
  void ForgetExec(const std::string& sandbox_id, const std::string& tree_id) override;
  std::vector<std::string> List() override;
  Status Checkpoint(const std::string& sandbox_id) override;
  bool HasCheckpoint(const std::string& sandbox_id) override;
  void DiscardCheckpoint(const std::string& sandbox_id) override;
  // Writes `dest`/fake-layer, holding the sandbox's id, when the sandbox has files here.
  Status ExportWritableLayer(const std::string& sandbox_id, const std::string& dest) override;
  Status KeepCheckpoint(const std::string& sandbox_id, const std::string& name, bool keep) override;
  Status ReinstateCheckpoint(const std::string& sandbox_id, const std::string& name) override;
  Status SeedFromCheckpoint(const std::string& sandbox_id, const std::string& source_id,
                            const std::string& name) override;
  Result<std::shared_ptr<void>> ReserveRoomToCheckpoint(const std::string& sandbox_id,
                                                        uint64_t memory_bytes) override;
  Result<std::shared_ptr<void>> ReserveRoomToReinstate(const std::string& sandbox_id,
                                                       const std::string& name) override;
  Result<std::shared_ptr<void>> ReserveRoomToHibernate(const std::string& sandbox_id,
                                                       uint64_t memory_bytes) override;
  Status DeleteNamedCheckpoint(const std::string& sandbox_id, const std::string& name) override;
  std::vector<NamedCheckpoint> ListNamedCheckpoints(const std::string& sandbox_id) override;
  std::vector<std::string> SandboxesWithKeptCheckpoints() override;
  // What KeepCheckpoint says a kept checkpoint occupies.
  void SetNamedCheckpointBytes(uint64_t bytes);
  // Kept checkpoint `name` of `sandbox_id` reads as taken by another runtime (`why`).
  void MarkIncompatible(const std::string& sandbox_id, const std::string& name,
                        const std::string& why);

  // Scripting. The next call of `op` (any sandbox) returns `status` and changes nothing.
  void FailNext(Op op, Status status);
  // The next call of `op` (any sandbox) throws std::runtime_error(`what`): a bug's exception,
  // for the tests that adaptd's background work survives one.
  void ThrowNext(Op op, std::string what);
  // The next call of `op` (kCheckpoint or kReinstateCheckpoint, any sandbox) stops once it has
  // begun, until ReleaseHeld(op): a test holds a verb midway, its sandbox's lock held, to see
  // what meets it meanwhile. WaitUntilHeld returns once such a call is stopped there.
  void HoldNext(Op op);
  void WaitUntilHeld(Op op);
  void ReleaseHeld(Op op);
  // The next Exec (any sandbox) starts `argv` on the host, its stdin, stdout and stderr on
  // pipes, in place of the process the request names (a file operation's agent, say).
  void ServeNextExec(std::vector<std::string> argv);
  // The sandbox runs, as if a previous adaptd had launched it (its shim outlived adaptd).
  void AddRunning(const std::string& id);
  // The sandbox's files are here but nothing runs (a crash mid-launch, or an ended sandbox).
  void AddStopped(const std::string& id);
  // The workload ends with `exit_code` (or is killed by `signal`); the monitor then exits.
  void Exit(const std::string& id, int exit_code, std::optional<int> signal = std::nullopt,
            bool oom_killed = false);
  // The workload prints `data` on `stream` (Observe's output).
  void Print(const std::string& id, Stream stream, std::string_view data);
  // The shim vanishes without writing an exit status (SIGKILLed, host reboot).
  void LoseMonitor(const std::string& id);

  // Inspection.
  std::vector<Call> calls();
  // How many calls of `op` were made for sandbox `id` (any sandbox when empty).
  int CountCalls(Op op, const std::string& id = "");
  // The runtime has files of the sandbox (it was launched and not destroyed without its disk).
  bool Has(const std::string& id);
  // Launched, workload running, monitor alive, not destroyed.
  bool Running(const std::string& id);
  std::optional<Sandbox> Get(const std::string& id);

 private:
  // Pops the scripted failure of `op`, if any. REQUIRES: mu_ held.
  std::optional<Status> TakeFailureLocked(Op op);
  // Stops here while `op` is held (HoldNext). REQUIRES: `lock` holds mu_.
  void PauseIfHeldLocked(std::unique_lock<std::mutex>& lock, Op op);

  std::mutex mu_;
  std::map<std::string, Sandbox> sandboxes_;
  // Checkpoints taken with `keep` of sandboxes destroyed without their disk.
  std::map<std::string, std::vector<NamedCheckpoint>> kept_;
  // The named checkpoints of `id`, its own or kept after it; nullptr when none. REQUIRES: mu_.
  std::vector<NamedCheckpoint>* NamedLocked(const std::string& id);
  std::map<Op, std::deque<Status>> failures_;
  std::map<Op, std::deque<std::string>> throws_;
  std::set<Op> hold_next_;  // HoldNext asked, no call stopped yet
  std::set<Op> holding_;    // a call is stopped, until ReleaseHeld
  std::condition_variable held_changed_;
  std::deque<std::vector<std::string>> exec_stand_ins_;
  std::vector<Call> calls_;
  uint64_t named_bytes_ = 1 << 20;
};

}  // namespace adapt::runtime
