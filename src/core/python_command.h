// Running Python in a sandbox (REST's /python, MCP's run_python, `adapt sandbox python`): a
// command that feeds the program to python3 on its standard input, and tells an image without
// python3 apart from a program that failed.
#pragma once

#include <string>

#include "base/status.h"
#include "core/command_request.h"
#include "core/command_view.h"

namespace adapt::core {

struct RunPython {
  std::string code;  // the program; on python3's standard input
  int timeout_seconds = 600;
  int wait_seconds = 10;
};

// Checks `req` (fields named as here: code, timeout_seconds, wait_seconds) and returns the
// command that runs it.
Result<RunCommandRequest> PythonCommand(const RunPython& req);

// True when `command` is a Python run that ended because the image has no python3.
bool PythonMissing(const Command& command);

}  // namespace adapt::core
