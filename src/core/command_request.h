// Parsing and validating POST /v1/sandboxes/{id}/commands; the first problem found is
// returned with the field it is about.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
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

Result<RunCommandRequest> ParseRunCommand(const nlohmann::json& body);

}  // namespace adapt::core
