// What `adapt sandbox exec`, `adapt sandbox python` and `adapt command` share: the commands'
// paths, following a command's output as it comes, waiting for its end, and the exit status
// it gives the CLI.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"
#include "cli/commands.h"

namespace adapt::cli {

std::string CommandsPath(const std::string& sandbox_id);
std::string CommandPath(const std::string& sandbox_id, const std::string& id);

// The exit status the CLI takes from a finished command, as a shell would.
int ExitCodeOf(const nlohmann::json& command);

// Follows the command's output stream (SSE) at `path`, writing stdout and stderr as they come
// when `print`; returns the final record from the stream's "result" event.
Result<nlohmann::json> StreamOutput(const ApiClient& client, const std::string& path,
                                    const Console& console, bool print);

// Waits until the command at `path` no longer runs; returns its record.
Result<nlohmann::json> WaitDone(const ApiClient& client, const std::string& path);

// Follows a started command (`started`, the POST's answer) to its end: prints its final record
// with --json, else its output as it comes and, when it did not exit, "adapt: <what> <status>"
// on stderr; the CLI's exit status becomes the command's.
Status FinishCommand(const ApiClient& client, const Console& console, Invocation& invocation,
                     const std::string& sandbox_id, const nlohmann::json& started,
                     const std::string& what);

}  // namespace adapt::cli
