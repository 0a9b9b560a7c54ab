// The JSON of /v1/sandboxes/{id}/python (and, later, /commands) mapped to the core's typed
// requests, with REST's field names (timeoutSeconds, waitSeconds) in every error.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/python_command.h"

namespace adapt::api {

// {code, timeoutSeconds, waitSeconds}: the first problem, naming its field.
Result<core::RunPython> ParseRunPython(const nlohmann::json& body);

}  // namespace adapt::api
