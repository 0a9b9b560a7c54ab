// What the sandbox tools share with tools in other files (sandbox_power_tools.cc): the
// snake_case summary of a sandbox, its output schema, the sandbox_id argument, and the
// brief wait for a starting sandbox. Defined in sandbox_tools.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/sandbox_service.h"
#include "mcp/tool.h"

namespace adapt::mcp {

nlohmann::json SandboxSummary(const nlohmann::json& sandbox);
nlohmann::json SandboxSummarySchema();
nlohmann::json SandboxIdArgumentSchema();
// Polls until the sandbox leaves provisioning, `seconds` pass, or the call is cancelled.
Result<nlohmann::json> WaitForSandboxReady(core::SandboxService& sandboxes, ToolContext& ctx,
                                           const std::string& id, int seconds);

}  // namespace adapt::mcp
