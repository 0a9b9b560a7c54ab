// Runtime: how adapt boots and tears down sandboxes. runsc is the implementation today;
// the interface is what a Kubernetes/RuntimeClass backend would implement later.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "os/unique_fd.h"
#include "runtime/agent_session.h"
#include "runtime/oci_spec.h"
#include "runtime/output_ring.h"
#include "runtime/shim_state.h"

namespace adapt::runtime {

struct LaunchRequest {
  SandboxSpec spec;          // id, process, limits; rootfs and helpers are filled by the runtime
  std::string image_rootfs;  // the image's read-only root filesystem
  // A layered (pulled) image instead: its layer directories, base first.
  std::vector<std::string> image_layers;
  uint64_t disk_mib = 2048;
  // true: runsc --network=none (no interface). false: --network=sandbox in
  // spec.netns_path (or a namespace of runsc's own when empty).
  bool network_none = true;
  // true: restore the checkpoint that Checkpoint() left (processes and memory come back)
  // instead of booting. Needs the same spec, disk and network as the checkpointed sandbox.
  bool restore = false;
  // Called by Launch once the root filesystem is made and before the sandbox's spec is
  // written: what the caller made beside it meanwhile (the network, on a thread of its own)
  // completes the spec. Called again when the same request is launched again (a failed
  // restore boots afresh), with the same answer. An error fails the launch as it is.
  std::function<Status(SandboxSpec& spec)> complete_spec;
};

// A checkpoint kept under a name beside the sandbox: its processes, memory and disk.
struct NamedCheckpoint {
  std::string name;
  uint64_t bytes = 0;      // what it occupies on disk
  int64_t created_at = 0;  // ms since the epoch
  // Kept after the sandbox's deletion (until deleted itself), when it was taken with `keep`.
  bool keep = false;
  // The runtime that took it, as recorded with it (runsc: its version and platform).
  std::string runtime_version;
  std::string platform;
  // Why this runtime cannot restore it (another runsc version or platform, or none
  // recorded), in one sentence; empty when it can.
  std::string incompatibility;
};

// What the runtime knows of a sandbox right now.
struct Observation {
  ShimState state;
  bool monitor_alive = false;  // the shim process is still there
  OutputRing output;
};

// A process to start beside the workload of a running sandbox.
struct ExecRequest {
  std::string sandbox_id;
  std::vector<std::string> argv;
  std::string cwd;               // empty: the image's
  std::vector<std::string> env;  // "K=V", added to the sandbox's
  std::string user;              // "uid:gid", empty: the workload's
};

// A started exec: `pid` is a child of this process (reap it with os::Wait); the pipes are
// the process's stdio. `tree_id` names it for KillExec.
struct ExecProcess {
  int pid = -1;
  os::UniqueFd stdin_fd;
  os::UniqueFd stdout_fd;
  os::UniqueFd stderr_fd;
  std::string tree_id;
};

// What a process started beside the workload inherits when its request says nothing.
struct ExecDefaults {
  std::vector<std::string> env;  // the workload's environment, "K=V"
  std::string cwd = "/";
  uint32_t uid = 0;
  uint32_t gid = 0;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // Prepares the root filesystem and starts the workload; returns once it runs or failed
  // to launch (see Observe). Blocking: call from a worker thread. On error nothing of the
  // sandbox stays mounted or running.
  virtual Status Launch(const LaunchRequest& request) = 0;
  // NotFound when the runtime has no trace of the sandbox.
  virtual Result<Observation> Observe(const std::string& id) = 0;
  // Stops the workload, unmounts, removes cgroups. Keeps the disk when `keep_disk`, else
  // removes every file of the sandbox. Idempotent. Blocking.
  virtual Status Destroy(const std::string& id, bool keep_disk) = 0;
  // Starts a process in a running sandbox. Does not block on the process.
  virtual Result<ExecProcess> Exec(const ExecRequest& request) = 0;
  // Kills the exec's process and every process in its group (its background children).
  // Blocking (a few hundred ms). Idempotent.
  virtual Status KillExec(const std::string& sandbox_id, const std::string& tree_id) = 0;
  // SIGTERM to the exec's process and every process in its group: a graceful kill's first
  // step (KillExec follows after the grace period). Blocking, like KillExec.
  virtual Status TerminateExec(const std::string& sandbox_id, const std::string& tree_id) = 0;
  // Sends `signal` to the exec's process only (not its group), so it can clean up before it
  // exits. Blocking, like KillExec. NotFound when the process has no recorded pid.
  virtual Status SignalExec(const std::string& sandbox_id, const std::string& tree_id,
                            int signal) = 0;
  // Drops what the runtime kept for a finished exec.
  virtual void ForgetExec(const std::string& sandbox_id, const std::string& tree_id) = 0;
  // Ids of every sandbox the runtime has state for (directories and runsc containers).
  virtual std::vector<std::string> List() = 0;
  // The session of the sandbox's in-sandbox agent when it is connected; nullptr otherwise
  // (exec through Exec then).
  virtual std::shared_ptr<AgentSession> Agent(const std::string& /*sandbox_id*/) { return nullptr; }
  // Agent, but when the sandbox booted moments ago and its agent has not connected yet,
  // waits for it (a bounded while after the boot) rather than answer nullptr: a command
  // then does not start a `runsc exec` beside the agent's own start-up. Blocks: workers only.
  virtual std::shared_ptr<AgentSession> AgentAfterBoot(const std::string& sandbox_id) {
    return Agent(sandbox_id);
  }
  // Calls `listener` (on a thread of the runtime's) when a sandbox's state may have changed,
  // e.g. its workload ended: a hint to Observe it now. Callers still poll; nullptr stops
  // the calls.
  virtual void SetStateListener(std::function<void(const std::string& sandbox_id)> /*listener*/) {}
  // What Exec would inherit from the workload; a runtime without an agent need not say.
  virtual Result<ExecDefaults> GetExecDefaults(const std::string& sandbox_id) {
    return Status(Code::kUnsupported, "no exec defaults for sandbox " + sandbox_id);
  }
  // Saves the running sandbox's processes and memory to disk and stops it; Destroy with
  // keep_disk then releases the rest and keeps the checkpoint. Blocking.
  virtual Status Checkpoint(const std::string& sandbox_id) {
    return Status(Code::kUnsupported, "sandbox " + sandbox_id + " cannot be checkpointed here");
  }
  // Whether a complete checkpoint of the sandbox is on disk.
  virtual bool HasCheckpoint(const std::string& /*sandbox_id*/) { return false; }
  // The size of the sandbox's checkpoint on disk, complete or being written (0: none).
  virtual uint64_t CheckpointBytes(const std::string& /*sandbox_id*/) { return 0; }
  // Removes the sandbox's checkpoint (after a restore, or when it cannot be used).
  virtual void DiscardCheckpoint(const std::string& /*sandbox_id*/) {}
  // Copies the sandbox's writable layer (overlay format: whiteouts as 0/0 character devices)
  // to `dest`, which must not exist yet. A running sandbox first has its kernel write back
  // what it cached; a stopped one's kept disk is mounted for the copy. The caller keeps the
  // sandbox from starting, stopping or being deleted meanwhile. Blocking.
  virtual Status ExportWritableLayer(const std::string& sandbox_id, const std::string& /*dest*/) {
    return Status(Code::kUnsupported,
                  "sandbox " + sandbox_id + " cannot be saved as an image here");
  }

  // Named checkpoints (a sandbox's own, removed with its files unless taken with `keep`:
  // those outlive the sandbox's deletion until deleted themselves, and are still listed, found
  // and deleted by the sandbox's id). `name` is a DNS label (InvalidArgument otherwise: it
  // becomes a path). Blocking (copies the disk).
  // Keeps a copy of the checkpoint Checkpoint() left and of the sandbox's disk as `name`.
  // REQUIRES: the compute released since that checkpoint (Destroy with keep_disk), so the disk
  // is unmounted and quiet. Conflict when `name` is kept; nothing is left on failure.
  virtual Status KeepCheckpoint(const std::string& sandbox_id, const std::string& /*name*/,
                                bool /*keep*/) {
    return Status(Code::kUnsupported, "sandbox " + sandbox_id + " cannot keep checkpoints here");
  }
  // Makes named checkpoint `name` the sandbox's checkpoint and disk again, so that a Launch
  // with `restore` resumes it. REQUIRES: the compute released. NotFound when not kept.
  virtual Status ReinstateCheckpoint(const std::string& sandbox_id, const std::string& /*name*/) {
    return Status(Code::kUnsupported, "sandbox " + sandbox_id + " cannot keep checkpoints here");
  }
  // Makes named checkpoint `name` of sandbox `source_id` the checkpoint and disk of sandbox
  // `sandbox_id`, which has never been launched, so that a Launch with `restore` resumes a copy
  // of it there (a fork: same memory and files, its own network). Nothing is done when the
  // sandbox has a disk already (it was seeded before). NotFound when not kept;
  // FailedPrecondition (its incompatibility) when this runtime cannot restore it; nothing is
  // left on failure.
  virtual Status SeedFromCheckpoint(const std::string& sandbox_id, const std::string& /*source_id*/,
                                    const std::string& /*name*/) {
    return Status(Code::kUnsupported, "sandbox " + sandbox_id + " cannot be forked here");
  }
  // Room on the host for the copies a named checkpoint writes, reserved (against other
  // checkpoints under way) while the returned token lives; checked before anything is
  // touched. Taking one needs the sandbox's memory (at most `memory_bytes`) and its disk's
  // allocated blocks; putting checkpoint `name` back needs what it occupies. Each needs a
  // margin of 1 GiB beyond (checkpoint_room.h). Unavailable, saying what is needed and what
  // is free, when the host has not that much. The default checks nothing.
  virtual Result<std::shared_ptr<void>> ReserveRoomToCheckpoint(const std::string& /*sandbox_id*/,
                                                                uint64_t /*memory_bytes*/) {
    return std::shared_ptr<void>();
  }
  virtual Result<std::shared_ptr<void>> ReserveRoomToReinstate(const std::string& /*sandbox_id*/,
                                                               const std::string& /*name*/) {
    return std::shared_ptr<void>();
  }
  // The same for a stop's save of the processes (Checkpoint): the memory only, the disk stays
  // where it is.
  virtual Result<std::shared_ptr<void>> ReserveRoomToHibernate(const std::string& /*sandbox_id*/,
                                                               uint64_t /*memory_bytes*/) {
    return std::shared_ptr<void>();
  }
  // NotFound when not kept.
  virtual Status DeleteNamedCheckpoint(const std::string& sandbox_id, const std::string& /*name*/) {
    return NotFound("sandbox " + sandbox_id + " has no such checkpoint");
  }
  // Oldest first.
  virtual std::vector<NamedCheckpoint> ListNamedCheckpoints(const std::string& /*sandbox_id*/) {
    return {};
  }
  // Ids of the deleted sandboxes whose checkpoints taken with `keep` are still here.
  virtual std::vector<std::string> SandboxesWithKeptCheckpoints() { return {}; }
};

}  // namespace adapt::runtime
