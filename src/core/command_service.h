// CommandService: the typed verbs on commands run inside a sandbox (issue 4), served by
// `runsc exec` (servedBy "runsc-exec"). REST handlers and (later) MCP tools only translate
// into these. Thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "core/auth.h"
#include "core/command_runner.h"
#include "core/image_catalog.h"
#include "runtime/runtime.h"
#include "store/store.h"

namespace adapt::core {

struct RunOutcome {
  bool finished = false;  // false: still running after waitSeconds (HTTP 202)
  nlohmann::json command;
};

struct StartedCommand {
  std::string id;
  int wait_seconds = 0;  // the request's waitSeconds
};

struct ListCommandsRequest {
  int limit = 50;
  std::string cursor;
};

class CommandService {
 public:
  CommandService(store::Store& store, runtime::Runtime& runtime, const ImageCatalog& images);

  // Marks the commands a previous adaptd left running as "lost": their runsc exec process
  // was its child and died with it. Call once, before serving.
  void Reconcile();

  // Validates `body`, starts the command and waits up to its waitSeconds for it to end.
  // Conflict when the sandbox is not running.
  Result<RunOutcome> Run(const Principal& who, const std::string& sandbox_id,
                         const nlohmann::json& body);
  // Run without the wait: validates `body` and starts the command. With WhenEnded and
  // Outcome, a caller waits without holding a thread.
  Result<StartedCommand> Start(const Principal& who, const std::string& sandbox_id,
                               const nlohmann::json& body);
  // The command now: finished (its final record) or running (its output so far). Reads the
  // store: brief, but blocking.
  Result<RunOutcome> Outcome(const Principal& who, const std::string& sandbox_id,
                             const std::string& id);
  // See CommandRunner::WhenEnded.
  uint64_t WhenEnded(const std::string& id, std::function<void()> fn) {
    return runner_.WhenEnded(id, std::move(fn));
  }
  void CancelWhenEnded(uint64_t token) { runner_.CancelWhenEnded(token); }
  // Blocks until the command no longer runs here or `until` passes, for a caller waiting on
  // a thread of its own (MCP tools).
  void AwaitEnd(const std::string& id, std::chrono::steady_clock::time_point until);
  Result<nlohmann::json> Get(const Principal& who, const std::string& sandbox_id,
                             const std::string& id);
  Result<nlohmann::json> List(const Principal& who, const std::string& sandbox_id,
                              const ListCommandsRequest& req);
  // Validates the ids, then a tap on the command's output; a null tap when it does not
  // run (any more): its kept output is then in Get's record.
  Result<std::unique_ptr<CommandRunner::Tap>> Follow(const Principal& who,
                                                     const std::string& sandbox_id,
                                                     const std::string& id);
  // Kills the command's process tree and returns it once it ended (status "killed"); a
  // command that already ended is returned as it is.
  Result<nlohmann::json> Kill(const Principal& who, const std::string& sandbox_id,
                              const std::string& id);
  // The sandbox ends (see CommandRunner::SandboxEnded): its lost commands say `why`.
  void SandboxEnded(const std::string& sandbox_id, const std::string& why, bool on_its_own) {
    runner_.SandboxEnded(sandbox_id, why, on_its_own);
  }

 private:
  Result<agent::SpawnRequest> AgentSpawn(const runtime::ExecRequest& exec,
                                         std::optional<std::pair<uint32_t, uint32_t>> user);
  Result<store::SandboxRecord> FindSandbox(const Principal& who, const std::string& id);
  Result<store::CommandRecord> FindCommand(const Principal& who, const std::string& sandbox_id,
                                           const std::string& id);

  store::Store& store_;
  runtime::Runtime& runtime_;
  const ImageCatalog& images_;
  CommandRunner runner_;
};

}  // namespace adapt::core
