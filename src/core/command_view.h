// Command: how the core shows a command run in a sandbox to its callers (REST and MCP map it
// to their words): its stored record, or while it runs here, the record with its output so far.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"

namespace adapt::core {

struct Command {
  std::string id;
  std::string sandbox_id;
  std::string status;  // running, exited, timeout, killed, lost or failed (to start)
  std::vector<std::string> argv;
  std::string cwd;   // empty: the sandbox's
  std::string user;  // as the request gave it; empty: the sandbox's
  int timeout_seconds = 600;
  std::optional<int> exit_code;  // unset while running, when signalled, or lost
  std::optional<int> signal;     // the signal that ended it
  std::string stdout_text;       // the latest 1 MiB of each stream, redacted, valid UTF-8
  std::string stderr_text;
  bool truncated = false;  // earlier output was dropped
  int64_t started_at = 0;  // ms since the epoch
  std::optional<int64_t> finished_at;
  std::string termination_reason;  // empty while running
  std::string error;               // why it was lost or failed to start; empty while none
  std::string served_by;           // "agent" or "runsc-exec"

  bool running() const { return status == "running"; }
};

struct CommandPage {
  std::vector<Command> items;  // newest first
  std::optional<std::string> next_cursor;
};

Command ViewOf(const store::CommandRecord& r);

}  // namespace adapt::core
