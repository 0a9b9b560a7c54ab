// The MCP methods, independent of the transport: initialize, ping, tools/list, tools/call
// and the notifications a client sends. The HTTP transport (mcp_routes.cc) owns sessions,
// streams and authentication.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mcp/json_rpc.h"
#include "mcp/tool.h"
#include "mcp/tool_registry.h"

namespace adapt::mcp {

// Protocol revisions served, newest first.
const std::vector<std::string>& SupportedProtocolVersions();
bool SupportsProtocolVersion(const std::string& version);

// params._meta.progressToken of a request, null when absent or not a string or integer.
nlohmann::json ProgressToken(const Message& request);

class McpServer {
 public:
  explicit McpServer(const ToolRegistry& tools) : tools_(tools) {}

  // The initialize result; `negotiated` receives the protocol version the session speaks:
  // the client's when served here, else the newest. A JSON-RPC error for bad params.
  nlohmann::json Initialize(const Message& request, std::string& negotiated) const;
  // Answers any other request through `answer`, called once: before Answer returns, or later,
  // from any thread, for a tool that waits (Tool::run_later). Thread-safe; tools/call may block
  // for as long as a tool's `run` runs. `ctx` must stay valid until `answer` was called.
  void Answer(const Message& request, ToolContext& ctx,
              std::function<void(nlohmann::json)> answer) const;

 private:
  nlohmann::json ListTools(const Message& request) const;
  void CallTool(const Message& request, ToolContext& ctx,
                std::function<void(nlohmann::json)> answer) const;

  const ToolRegistry& tools_;
};

}  // namespace adapt::mcp
