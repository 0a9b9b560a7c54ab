// CommandRunner owns the commands running in sandboxes, through the sandbox's agent
// (servedBy "agent") or through `runsc exec` (servedBy "runsc-exec"): it feeds their
// stdin, keeps the latest 1 MiB of each output stream, enforces their timeout, lets
// followers tap their output live, and writes their final record to the store.
// One watcher thread per running command.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "core/event_bus.h"
#include "core/finished_commands.h"
#include "core/sandbox_activity.h"
#include "runtime/runtime.h"
#include "store/store.h"

namespace adapt::core {

class CommandRunner {
 public:
  static constexpr size_t kKeptBytesPerStream = 1024 * 1024;
  // A command served by the agent outlives adaptd: its output so far is written to its record
  // while it runs, the latest kSavedBytesPerStream of each stream at most once per
  // kSaveInterval, so that a restarted adaptd that attaches it again keeps what came before.
  static constexpr size_t kSavedBytesPerStream = 64 * 1024;
  static constexpr std::chrono::milliseconds kSaveInterval{1000};
  // How long a command run through `runsc exec` has its output read after its process
  // exited: children it left in the background may hold the pipes and keep writing.
  static constexpr std::chrono::milliseconds kDrainAfterExit{1000};
  // An agent that has not told a command's end this long after its SIGKILL was sent (the
  // sandbox's root can stop or replace the agent) has it recorded lost.
  static constexpr std::chrono::milliseconds kUnansweredKillLimit{30000};
  struct Running;

  // Follows one command's output: first what was kept, then what comes.
  class Tap {
   public:
    explicit Tap(std::shared_ptr<Running> command);
    // Waits up to `timeout` for output not returned yet (sanitized to UTF-8, secrets
    // redacted). False once the command ended and everything was returned.
    bool Next(std::string& out, std::string& err, std::chrono::milliseconds timeout);

   private:
    std::shared_ptr<Running> c_;
    uint64_t out_pos_ = 0, err_pos_ = 0;    // the streams' positions returned up to
    uint64_t out_seen_ = 0, err_seen_ = 0;  // and looked at (a held-back end lies between)
  };

  CommandRunner(store::Store& store, runtime::Runtime& runtime);
  // kUnansweredKillLimit unless a test shortens it; before any command starts.
  void SetUnansweredKillLimit(std::chrono::milliseconds limit) { unanswered_kill_limit_ = limit; }
  // Stops watching: the runsc exec processes are killed and their commands stay "running"
  // in the store, to be marked "lost" at the next start.
  ~CommandRunner();

  // Takes over `process`, whose command `record` is already stored as running. `secrets`
  // are redacted from its output.
  void Start(store::CommandRecord record, runtime::ExecProcess process, std::string stdin_data,
             int timeout_seconds, std::vector<std::string> secrets);
  // Starts `spawn` through the sandbox's agent; `record` is already stored as running.
  // Fails, with nothing started, when the agent cannot take it.
  Status StartViaAgent(store::CommandRecord record, std::shared_ptr<runtime::AgentSession> agent,
                       agent::SpawnRequest spawn, std::string stdin_data, int timeout_seconds,
                       std::vector<std::string> secrets);
  // Takes over a command that a previous adaptd started through the sandbox's agent (its
  // record says running): waits up to `wait` for the agent to connect, attaches the
  // command if the agent still runs it (its output since, then its exit, are recorded as
  // usual; its timeout counts from its start), else records it lost. The output the record
  // holds (saved while it ran) comes first.
  void Reattach(store::CommandRecord record, std::vector<std::string> secrets,
                std::chrono::milliseconds wait);
  // The record with the output so far; nullopt when the command does not run here (any more).
  std::optional<store::CommandRecord> Snapshot(const std::string& id);
  // The final record of command `id` of this organization's sandbox that ended here moments
  // ago, as it was written to the store; null when not kept (see FinishedCommands): read the
  // store.
  std::shared_ptr<const store::CommandRecord> Finished(const std::string& org_id,
                                                       const std::string& sandbox_id,
                                                       const std::string& id) {
    return finished_.Find(org_id, sandbox_id, id, std::chrono::steady_clock::now());
  }
  // Kills the command's process tree; false when it does not run here. With a `grace` period,
  // SIGTERM to its process group first and SIGKILL once `grace` passed (if it still runs).
  bool Kill(const std::string& id, std::chrono::milliseconds grace = {});
  // True while command `id` runs here.
  bool IsRunning(const std::string& id);
  // Where a command's end is announced (Change::kCommandEnded), for the Waiter. Set before
  // starting commands.
  void set_event_bus(EventBus* bus) { bus_ = bus; }
  // Where a running command marks its sandbox in use. Set before starting commands.
  void set_activity(SandboxActivity* activity) { activity_ = activity; }
  // A tap on the command's output; nullptr when it does not run here.
  std::unique_ptr<Tap> Follow(const std::string& id);
  // Says why sandbox `sandbox_id` ends (its `error`, or that it is deleted or stopped), once
  // that is recorded and before its compute goes: its commands that end `lost` with its agent
  // from now on carry `why` as their `error`. `on_its_own`: the sandbox already died (out of
  // memory, its startup command ended...), so the commands lost in the moments before, when
  // its agent went with it, are written again with `why` too.
  void SandboxEnded(const std::string& sandbox_id, const std::string& why, bool on_its_own);

 private:
  std::shared_ptr<Running> Register(store::CommandRecord record, int timeout_seconds,
                                    std::vector<std::string> secrets);
  void Unregister(const std::string& id);
  void Watch(std::shared_ptr<Running> command);
  void WatchAgent(std::shared_ptr<Running> command);
  void ReattachAndWatch(std::shared_ptr<Running> command, std::chrono::milliseconds wait);
  void Finish(Running& c);
  // Why `runsc exec` could not run the command, when its sandbox's workload had ended (the
  // container stopped or gone) or a checkpoint or roll back had taken the container away: it
  // exits 128 then, which is the sandbox's state, not the command's exit status. Waits up to
  // kExecEndSettle for the shim to record an end. Unset: the exit status is the command's.
  std::optional<std::string> ExecRefusedBySandbox(Running& c);
  // Why the agent's connection dropped under a command, when its sandbox had stopped running
  // (its startup command ended, it crashed) before that end reached SandboxEnded: the answer
  // waiting on the command then says so, not only that the connection was lost. Waits up to
  // kExecEndSettle. Unset: the sandbox runs on, or its end's reason is known already.
  std::optional<std::string> AgentLostWithSandbox(Running& c);
  // Where a watcher that threw lands (command_runner_fault.cc): the command is recorded lost
  // with `error`, unless Finish recorded it already.
  void FailWatch(const std::shared_ptr<Running>& c, const std::string& error);
  // Kills a command nothing follows any more (its watcher threw), best effort.
  void KillUnfollowed(Running& c);
  // Writes an agent-served command's output so far to its record when it changed and the last
  // write is kSaveInterval old. Called by its watcher only, which writes its final record
  // after: a save never overwrites the end. Call without c.mu held.
  void SaveOutput(Running& c);
  // The signal a watcher sends now (0: none): SIGKILL at a timeout or once a kill is due,
  // SIGTERM first for a graceful kill. Marks it sent. Call with c.mu held.
  static int NextSignalLocked(Running& c);

  store::Store& store_;
  runtime::Runtime& runtime_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Running>> running_;  // by command id
  // Guarded by mu_. Sandbox id -> why it ended, while commands of it still run here.
  std::map<std::string, std::string> ended_;
  // Guarded by mu_. Sandbox id -> its commands recorded lost with the agent before the
  // sandbox's end was known: SandboxEnded writes the recent ones again with its reason.
  struct Lost {
    std::string org_id, id;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, std::vector<Lost>> lost_;
  FinishedCommands finished_;
  EventBus* bus_ = nullptr;
  SandboxActivity* activity_ = nullptr;
  int threads_ = 0;
  std::atomic<bool> stopping_{false};
  std::chrono::milliseconds unanswered_kill_limit_ = kUnansweredKillLimit;
};

// Fills a command's stdout, stderr and truncated from raw output, which holds each stream's
// latest bytes (`truncated`: older ones were dropped): the latest `keep` bytes of each, made
// valid UTF-8, `secrets` hidden, also one that straddles the kept part's start. `open`: the
// command still runs, so an end that could begin a secret is left out until it shows more.
// `ends`, when given: where the text written of each stream (stdout, stderr) ends, counted from
// the start of `out` and `err`.
void ApplyCommandOutput(const std::string& out, const std::string& err, bool truncated, bool open,
                        const std::vector<std::string>& secrets, store::CommandRecord& record,
                        size_t keep = CommandRunner::kKeptBytesPerStream,
                        uint64_t (*ends)[2] = nullptr);

}  // namespace adapt::core
