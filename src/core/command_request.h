// A command to run in a sandbox, as the core takes it (REST's /commands and /python, MCP's
// run_command and run_python map to it), and its validation, naming fields as here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::core {

struct RunCommandRequest {
  std::vector<std::string> argv;  // `command` becomes {"/bin/sh", "-c", command}
  std::string cwd;                // empty: the sandbox's
  std::map<std::string, std::string> env;
  std::string stdin_data;
  std::string user;  // as given; empty: the sandbox's
  int timeout_seconds = 600;
  int wait_seconds = 10;
};

// The first problem of `req`, naming its field (argv, cwd, env, stdin, user, timeout_seconds,
// wait_seconds); OK when there is none.
Status ValidateRunCommand(const RunCommandRequest& req);

}  // namespace adapt::core
