// The command surface of `adapt`: each command group adds its CLI11 subcommands, and the
// subcommand chosen on the command line fills in the Invocation that cli_app then runs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/api_client.h"
#include "cli/config.h"

namespace adapt::cli {

// The streams a command reads and prints to; they outlive the command.
struct Console {
  std::istream& in;
  std::ostream& out;
};

struct Invocation {
  ConfigFlags config;  // --url, --api-key
  bool json = false;   // --json: print adaptd's JSON instead of a table or summary

  // Arguments after a literal "--", split off before CLI11 parses the rest.
  bool has_trailing_args = false;
  std::vector<std::string> trailing_args;
  // Set by the one command that takes trailing arguments (sandbox create).
  bool accepts_trailing_args = false;

  // Checks the flags and builds the request without the network; its error is a usage
  // error (exit 2). May be empty.
  std::function<Status(const Console&)> prepare;
  // Talks to adaptd and prints the result; its error exits 1.
  std::function<Status(const ApiClient&, const Console&)> run;
  // The exit status when run succeeds (sandbox exec: the command's).
  int exit_code = 0;
};

// Each adds one group ("sandbox", "org", "key") to `app`. The subcommands' callbacks write
// into `invocation`, which must outlive `app`'s parse.
void AddSandboxCommands(CLI::App& app, Invocation& invocation);
void AddOrgCommands(CLI::App& app, Invocation& invocation);
void AddKeyCommands(CLI::App& app, Invocation& invocation);
void AddUserCommands(CLI::App& app, Invocation& invocation);
// "command" (get, kill); AddSandboxExec adds `exec` to the "sandbox" group.
void AddCommandCommands(CLI::App& app, Invocation& invocation);
void AddSandboxExec(CLI::App& sandbox_group, Invocation& invocation);
// `python` in the "sandbox" group (python_commands.cc).
void AddSandboxPython(CLI::App& sandbox_group, Invocation& invocation);
// `cp` and `ls` in the "sandbox" group (file_commands.cc).
void AddSandboxFiles(CLI::App& sandbox_group, Invocation& invocation);
// "endpoint" (ls, rm); AddSandboxExpose adds `expose` to the "sandbox" group.
void AddEndpointCommands(CLI::App& app, Invocation& invocation);
void AddSandboxExpose(CLI::App& sandbox_group, Invocation& invocation);
// `stop` and `start` in the "sandbox" group (sandbox_power_commands.cc).
void AddSandboxStopStart(CLI::App& sandbox_group, Invocation& invocation);
// `checkpoint` (create, list, delete, restore) in the "sandbox" group (checkpoint_commands.cc).
void AddSandboxCheckpoints(CLI::App& sandbox_group, Invocation& invocation);
// `stats` in the "sandbox" group (sandbox_stats_command.cc).
void AddSandboxStats(CLI::App& sandbox_group, Invocation& invocation);
// `sandbox logs ID`: the startup output as it is produced (sandbox_logs_command.cc).
void AddSandboxLogs(CLI::App& sandbox_group, Invocation& invocation);
// "storage" (create, ls, rm): persistent storage.
void AddStorageCommands(CLI::App& app, Invocation& invocation);
// "job" (submit, ls, cancel, rm) and "run" (ls, get, cancel): one-shot jobs and their runs.
void AddJobCommands(CLI::App& app, Invocation& invocation);
// adapt app deploy|ls|get|scale|rollback|rm (app_commands.cc).
void AddAppCommands(CLI::App& app, Invocation& invocation);
// "image" (pull, import, ls, get, rm) and "env" (ls).
void AddImageCommands(CLI::App& app, Invocation& invocation);
// "op" (get): checkpoints, restores and image pulls (operation_commands.cc).
void AddOperationCommands(CLI::App& app, Invocation& invocation);
void AddEnvCommands(CLI::App& app, Invocation& invocation);
// adapt gpu ls (gpu_commands.cc).
void AddGpuCommands(CLI::App& app, Invocation& invocation);
// adapt secret set|ls|rm (secret_commands.cc).
void AddSecretCommands(CLI::App& app, Invocation& invocation);
// adapt db status|create|rotate (database_commands.cc).
void AddDatabaseCommands(CLI::App& app, Invocation& invocation);
// "mcp": the MCP server on stdio, a proxy to adaptd's /mcp.
void AddMcpCommand(CLI::App& app, Invocation& invocation);
// "object" (ls, get, put, rm, url) and "site" (publish, ls, rm): object_commands.cc.
void AddObjectCommands(CLI::App& app, Invocation& invocation);
// adapt object artifacts|save|attach (artifact_commands.cc), under `adapt object`.
void AddArtifactCommands(CLI::App& group, Invocation& invocation);
// `token` (create, ls, rm) in the "object" group: storage gateway credentials.
void AddStorageTokenCommands(CLI::App& object_group, Invocation& invocation);
void AddSiteCommands(CLI::App& app, Invocation& invocation);
// "account" ([register]) and "admin" (plan ls|get|set|assign, credit): account_commands.cc.
void AddAccountCommands(CLI::App& app, Invocation& invocation);

}  // namespace adapt::cli
