// What the sandbox tools share with tools in other files (sandbox_power_tools.cc): MCP's
// snake_case summary of a core::Sandbox, its output schema, the sandbox_id argument, and the
// brief wait for a starting sandbox. Defined in sandbox_tools.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/sandbox_service.h"
#include "mcp/tool.h"

namespace adapt::mcp {

nlohmann::json SandboxSummary(const core::Sandbox& sandbox);
nlohmann::json SandboxSummarySchema();
nlohmann::json SandboxIdArgumentSchema();
// Polls until the sandbox leaves provisioning, `seconds` pass, or the call is cancelled.
Result<core::Sandbox> WaitForSandboxReady(core::SandboxService& sandboxes, ToolContext& ctx,
                                          const std::string& id, int seconds);

}  // namespace adapt::mcp
