// MCP's sandbox vocabulary for create_sandbox: the tool's snake_case arguments (memory in GiB,
// the name label as `name`) mapped to core::CreateSandbox, and the names the core's errors
// use for them. The arguments have passed the tool's input schema (types and bounds) first.
#pragma once

#include <nlohmann/json.hpp>

#include "core/field_names.h"
#include "core/sandbox_request.h"

namespace adapt::mcp {

// MCP's names for the core's fields ("memory_mib" is "memory_gib").
const core::FieldNames& McpSandboxFields();

core::CreateSandbox CreateSandboxFromArguments(const nlohmann::json& args);

}  // namespace adapt::mcp
