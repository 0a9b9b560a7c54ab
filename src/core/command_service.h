// CommandService: the typed verbs on commands run inside a sandbox (issue 4), served by
// `runsc exec` (servedBy "runsc-exec"). REST handlers and (later) MCP tools only translate
// into these. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "core/auth.h"
#include "core/command_request.h"
#include "core/command_runner.h"
#include "core/command_view.h"
#include "core/image_catalog.h"
#include "core/python_command.h"
#include "core/waiter.h"
#include "runtime/runtime.h"
#include "store/store.h"

namespace adapt::core {

struct RunOutcome {
  bool finished = false;  // false: still running (after waitSeconds: HTTP 202)
  Command command;
};

struct StartedCommand {
  std::string id;
  int wait_seconds = 0;  // the request's
};

struct ListCommandsRequest {
  int limit = 50;
  std::string cursor;
};

class CommandService {
 public:
  // How long a kill waits for its command to end before answering with it as it is.
  static constexpr std::chrono::seconds kKillWait{10};

  CommandService(store::Store& store, runtime::Runtime& runtime, const ImageCatalog& images);

  // Marks the commands a previous adaptd left running as "lost": their runsc exec process
  // was its child and died with it. Call once, before serving.
  void Reconcile();

  // Validates `req` (ValidateRunCommand) and starts the command; the caller waits for its
  // wait_seconds with AwaitEnd, then reads Outcome. Conflict when the sandbox is not running.
  Result<StartedCommand> Start(const Principal& who, const std::string& sandbox_id,
                               RunCommandRequest req);
  // Checks `python` and starts it, as Start does (REST's /python, MCP's run_python).
  Result<StartedCommand> StartPython(const Principal& who, const std::string& sandbox_id,
                                     const RunPython& python);
  // Outcome for a Python run: kUnsupported, naming the sandbox, when it ended because its image
  // has no python3.
  Result<RunOutcome> PythonOutcome(const Principal& who, const std::string& sandbox_id,
                                   const std::string& id);
  // The command now: finished (its final record) or running (its output so far). Reads the
  // store: brief, but blocking.
  Result<RunOutcome> Outcome(const Principal& who, const std::string& sandbox_id,
                             const std::string& id);
  // Calls `done` once command `id` no longer runs here, or at `deadline`, holding no thread
  // meanwhile (see Waiter); `ticks` report progress while it waits. Without a waiter
  // (set_waiter), `done` runs at once, on this thread, with kCancelled.
  Waiter::Handle AwaitEnd(const std::string& id, Waiter::Clock::time_point deadline,
                          Waiter::Done done, Waiter::Ticks ticks = {});
  // Where commands' ends are announced (`bus`) and waited on (`waiter`). Set before serving.
  void set_waiter(EventBus* bus, Waiter* waiter) {
    runner_.set_event_bus(bus);
    waiter_ = waiter;
  }
  // Where running commands mark their sandbox in use (idle_tracker.h). Set before serving.
  void set_activity(SandboxActivity* activity) { runner_.set_activity(activity); }
  // NotFound for an id of another organization or sandbox.
  Result<Command> Get(const Principal& who, const std::string& sandbox_id, const std::string& id);
  // Newest first.
  Result<CommandPage> List(const Principal& who, const std::string& sandbox_id,
                           const ListCommandsRequest& req);
  // Validates the ids, then a tap on the command's output; a null tap when it does not
  // run (any more): its kept output is then in Get's record.
  Result<std::unique_ptr<CommandRunner::Tap>> Follow(const Principal& who,
                                                     const std::string& sandbox_id,
                                                     const std::string& id);
  // Has the command's process tree killed, and returns at once. A command that already
  // ended is returned as it is (finished); else the caller waits for its end with AwaitEnd,
  // at most kKillWait, holding no thread, then reads it with Outcome (status "killed").
  // With a `grace` period: SIGTERM to the process group first, SIGKILL after `grace`.
  Result<RunOutcome> Kill(const Principal& who, const std::string& sandbox_id,
                          const std::string& id, std::chrono::milliseconds grace = {});
  // The sandbox ends (see CommandRunner::SandboxEnded): its lost commands say `why`.
  void SandboxEnded(const std::string& sandbox_id, const std::string& why, bool on_its_own) {
    runner_.SandboxEnded(sandbox_id, why, on_its_own);
  }

 private:
  Result<agent::SpawnRequest> AgentSpawn(const runtime::ExecRequest& exec,
                                         std::optional<std::pair<uint32_t, uint32_t>> user);
  Result<StartedCommand> StartCommand(const Principal& who, store::SandboxRecord sandbox,
                                      RunCommandRequest req);
  Result<store::SandboxRecord> FindSandbox(const Principal& who, const std::string& id);
  Result<store::CommandRecord> FindCommand(const Principal& who, const std::string& sandbox_id,
                                           const std::string& id);

  store::Store& store_;
  runtime::Runtime& runtime_;
  const ImageCatalog& images_;
  CommandRunner runner_;
  Waiter* waiter_ = nullptr;
};

}  // namespace adapt::core
