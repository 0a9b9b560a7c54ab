// RunscRuntime: sandboxes as gVisor runsc containers, each watched by an adapt-shim.
// Thread-safe: calls for different ids run concurrently; calls for one id must not.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/agent_hub.h"
#include "runtime/checkpoint_room.h"
#include "runtime/disk_templates.h"
#include "runtime/runtime.h"
#include "runtime/state_watcher.h"

namespace adapt::runtime {

struct RunscOptions {
  std::string runsc = "runsc";      // the binary
  std::string state_dir;            // sandboxes/ and runsc/ live below it
  std::string shim_binary;          // path of adapt-shim
  std::string helpers_dir;          // holds adapt-pause, adapt-agent, adapt-statx.so; at /.adapt
  std::string platform = "ptrace";  // no KVM on the machines we target
  // Listens for the sandboxes' agents; nullptr: no agent is started.
  AgentHub* agents = nullptr;
  // The checkpoint store's fscrypt key (DeriveCheckpointStoreKey); empty: no store, so no
  // checkpoints (they would hold the sandboxes' memory in plaintext on the host's disk).
  std::string checkpoint_key;
  // How long `runsc checkpoint` may run before it is killed; unset: CheckpointTimeLimit of the
  // sandbox's memory limit (checkpoint_time_limit.h). Tests shorten it.
  std::optional<std::chrono::seconds> checkpoint_time_limit;
};

class RunscRuntime : public Runtime {
 public:
  explicit RunscRuntime(RunscOptions options);

  // Detects the runsc version (old releases need the /proc/sys/net shim) and probes whether
  // its statx needs the fix (statx_fix.h), when the helpers hold adapt-statx.so. Call once.
  Status Init();

  Status Launch(const LaunchRequest& request) override;
  Result<Observation> Observe(const std::string& id) override;
  Status Destroy(const std::string& id, bool keep_disk) override;
  std::vector<std::string> List() override;
  Result<ExecProcess> Exec(const ExecRequest& request) override;
  Status KillExec(const std::string& sandbox_id, const std::string& tree_id) override;
  Status TerminateExec(const std::string& sandbox_id, const std::string& tree_id) override;
  Status SignalExec(const std::string& sandbox_id, const std::string& tree_id, int signal) override;
  void ForgetExec(const std::string& sandbox_id, const std::string& tree_id) override;
  std::shared_ptr<AgentSession> Agent(const std::string& sandbox_id) override;
  std::shared_ptr<AgentSession> AgentAfterBoot(const std::string& sandbox_id) override;
  void SetStateListener(std::function<void(const std::string&)> listener) override;
  Result<ExecDefaults> GetExecDefaults(const std::string& sandbox_id) override;
  Status Checkpoint(const std::string& sandbox_id) override;
  bool HasCheckpoint(const std::string& sandbox_id) override;
  uint64_t CheckpointBytes(const std::string& sandbox_id) override;
  void DiscardCheckpoint(const std::string& sandbox_id) override;
  Status ExportWritableLayer(const std::string& sandbox_id, const std::string& dest) override;
  // runsc_named_checkpoints.cc
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
  // Listens again for the agents of the sandboxes still running (after an adaptd restart).
  void ResumeAgents();
  // Unmounts the checkpoint store, at shutdown (runsc_checkpoint_home.cc).
  void CloseCheckpoints();
  // OK while the store is open; otherwise why checkpoints cannot be taken.
  Status CheckpointStoreReady() const;

  std::string SandboxDir(const std::string& id) const;
  // The sandbox's directory in the encrypted checkpoint store: its checkpoint image and its
  // named checkpoints live there, not in SandboxDir.
  std::string CheckpointHome(const std::string& id) const;
  // Where Checkpoint() leaves the sandbox's image (runsc checkpoint --image-path).
  std::string CheckpointDir(const std::string& id) const {
    return CheckpointHome(id) + "/checkpoint";
  }
  const std::string& version() const { return version_; }
  bool needs_netns_shim() const { return needs_netns_shim_; }
  // Whether sandboxes get adapt-statx.so in their /etc/ld.so.preload.
  bool statx_fix() const { return statx_fix_; }

 private:
  std::vector<std::string> GlobalFlags(bool network_none) const;
  // KillExec and SignalExec: `signal` to the exec's process, and to its group when `group`.
  Status SendExecSignal(const std::string& sandbox_id, const std::string& tree_id, int signal,
                        bool group);
  // Writes the sandbox's /etc/ld.so.preload into `dir` and names it in `spec`.
  Status AddStatxFix(const std::string& dir, SandboxSpec& spec) const;
  // Where a deleted sandbox's checkpoints taken with `keep` live on.
  std::string KeptDir(const std::string& id) const;
  // runsc_checkpoint_home.cc: opens the store, moves in what an adaptd before the store left
  // in plaintext, and removes the homes of sandboxes that are gone. Failing, checkpoints are
  // refused with the reason (checkpoint_store_status_) and sandboxes run without them.
  void OpenCheckpoints();
  // At start-up: removes the copies a crash cut short, which nothing else would (they are
  // not listed or counted, and only a take or copy of the same name would replace them):
  // <name>.partial named checkpoints and checkpoint.partial images in the store, and
  // disk.img and agent.key copies (.reinstating, .seeding) in the sandboxes' directories.
  void RemoveCheckpointLeftovers();
  // The directory of named checkpoint `name` of `id`: the sandbox's own, or the kept one.
  std::string NamedDir(const std::string& id, const std::string& name) const;
  // Moves the sandbox's checkpoints taken with `keep` to KeptDir, before its directory goes.
  Status SaveKeptCheckpoints(const std::string& id);
  // Reads what kept checkpoint directory `dir` records of the runsc that took it into `c`
  // and says in c.incompatibility why this one cannot restore it.
  void ReadTakenBy(const std::string& dir, NamedCheckpoint& c) const;
  // `runsc <the shim's global flags> exec`, for a running sandbox.
  Result<std::vector<std::string>> ExecPrefix(const std::string& sandbox_id) const;
  // `runsc <the shim's global flags> <verb> <id>`.
  Result<std::vector<std::string>> RunscVerb(const std::string& sandbox_id,
                                             const std::string& verb) const;
  // runsc_writable_layer.cc: the sandbox paused for a copy of its writable layer (a marker in
  // its directory says so until it is resumed), resumed after it, and at start-up resumed
  // when a crash came between the two.
  Status PauseForExport(const std::string& sandbox_id);
  Status ResumeAfterExport(const std::string& sandbox_id);
  void ResumeSandboxesLeftPaused();

  RunscOptions options_;
  DiskTemplates disks_;  // the sandboxes' formatted disk templates, below state_dir
  CheckpointRoom room_;  // the host's free space that named checkpoints under way hold
  std::string version_;
  bool needs_netns_shim_ = true;
  bool statx_fix_ = false;
  // On the watcher's thread: bumps the generation, then tells the listener.
  void OnStateWritten(const std::string& id);
  uint64_t StateGeneration();
  // Every state file a shim writes bumps the generation, which a launch waits on. Declared
  // before the watcher, whose thread uses them until it is gone.
  std::mutex state_mu_;
  std::condition_variable state_written_;
  uint64_t state_generation_ = 0;  // state_mu_
  std::mutex listener_mu_;
  std::function<void(const std::string&)> listener_;  // listener_mu_
  std::unique_ptr<StateWatcher> watcher_;
  Status checkpoint_store_status_;
};

}  // namespace adapt::runtime
