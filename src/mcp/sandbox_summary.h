// What the sandbox tools share with tools in other files (sandbox_power_tools.cc): MCP's
// snake_case summary of a core::Sandbox, its output schema, the sandbox_id argument, and the
// wait for a starting sandbox. Defined in sandbox_tools.cc and sandbox_wait.cc.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/sandbox_service.h"
#include "mcp/tool.h"

namespace adapt::mcp {

nlohmann::json SandboxSummary(const core::Sandbox& sandbox);
nlohmann::json SandboxSummarySchema();
nlohmann::json SandboxIdArgumentSchema();
// Deletes the sandbox and answers delete_sandbox's {sandbox_id, status, deleted} (deleted
// false: cleanup still runs), or the failure sentence.
ToolResult DeleteSandboxAnswer(core::SandboxService& sandboxes, ToolContext& ctx,
                               const std::string& id);
// Calls `done` once with the sandbox (core::Sandbox) when it leaves provisioning, `seconds`
// pass, or the call is cancelled; holds no thread meanwhile (sandbox_wait.cc).
void WaitForSandboxReadyLater(core::SandboxService& sandboxes, ToolContext& ctx,
                              const std::string& id, int seconds,
                              std::function<void(Result<core::Sandbox>)> done);

}  // namespace adapt::mcp
