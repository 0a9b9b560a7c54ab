// Waiting for a sandbox to leave `provisioning`, shared by `sandbox create`, `sandbox start`
// and the commands that need a running sandbox (exec, cp, ls). The wait follows the sandbox's
// event stream, so it ends when adaptd announces the change, not at the next poll.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"

namespace adapt::cli {

// How long create, start, exec, cp and ls wait by default.
inline constexpr std::chrono::seconds kDefaultSandboxWait{60};

// Returns the sandbox's record once its status is no longer "provisioning", or the latest
// record when `limit` passes first (still "provisioning"). `sandbox` is its record as last
// seen; when that is not provisioning, or `limit` is zero, it is returned without a request.
// Errors: adaptd unreachable, or its error answer (e.g. 404 for another organization's id).
Result<nlohmann::json> WaitWhileProvisioning(const ApiClient& client, const std::string& id,
                                             nlohmann::json sandbox, std::chrono::seconds limit);

// For commands that need the sandbox running: reads it and, while it is provisioning, waits up
// to `limit` for it. OK when it has left provisioning (whatever it became: adaptd's own answer
// to the command then says why a stopped or ended sandbox cannot serve it); kUnavailable
// naming the sandbox when it is still provisioning at the end.
Status AwaitProvisioned(const ApiClient& client, const std::string& id,
                        std::chrono::seconds limit = kDefaultSandboxWait);

// The "status" member, "" when absent.
std::string SandboxStatus(const nlohmann::json& sandbox);

}  // namespace adapt::cli
