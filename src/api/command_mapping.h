// The JSON of POST /v1/sandboxes/{id}/commands and /python mapped to the core's typed
// requests, with REST's field names (timeoutSeconds, waitSeconds) in every error.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/command_request.h"
#include "core/python_command.h"

namespace adapt::api {

// {argv | command, cwd, env, stdin, user, timeoutSeconds, waitSeconds}: the first problem,
// naming its field.
Result<core::RunCommandRequest> ParseRunCommand(const nlohmann::json& body);
// {code, timeoutSeconds, waitSeconds}: the first problem, naming its field.
Result<core::RunPython> ParseRunPython(const nlohmann::json& body);

}  // namespace adapt::api
