// REST's command vocabulary (docs/openapi.yaml): the JSON of POST /v1/sandboxes/{id}/commands
// and /python mapped to the core's typed requests, with REST's field names (timeoutSeconds,
// waitSeconds) in every error, and core::Command mapped to the wire object.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/command_request.h"
#include "core/command_view.h"
#include "core/python_command.h"

namespace adapt::api {

// {argv | command, cwd, env, stdin, user, timeoutSeconds, waitSeconds}: the first problem,
// naming its field.
Result<core::RunCommandRequest> ParseRunCommand(const nlohmann::json& body);
// {code, timeoutSeconds, waitSeconds}: the first problem, naming its field.
Result<core::RunPython> ParseRunPython(const nlohmann::json& body);

// {id, sandboxId, status, argv, cwd, user, timeoutSeconds, exitCode, signal, stdout, stderr,
// truncated, startedAt, finishedAt, terminationReason, error, servedBy}: unset values are null.
nlohmann::json CommandToJson(const core::Command& c);
// {"items": [...], "nextCursor": ...}
nlohmann::json CommandPageToJson(const core::CommandPage& page);

}  // namespace adapt::api
