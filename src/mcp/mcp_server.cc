#include "mcp/mcp_server.h"

#include <atomic>
#include <exception>
#include <memory>

#include "base/log.h"
#include "core/registration_gate.h"
#include "mcp/argument_check.h"
#include "mcp/tools.h"

namespace adapt::mcp {

using nlohmann::json;

namespace {

// The tool that registers a signed-up account: the one write an unregistered account may make.
constexpr char kRegisterTool[] = "register_user";

}  // namespace

const std::vector<std::string>& SupportedProtocolVersions() {
  static const std::vector<std::string> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26"};
  return kVersions;
}

bool SupportsProtocolVersion(const std::string& version) {
  for (const auto& v : SupportedProtocolVersions())
    if (v == version) return true;
  return false;
}

json ProgressToken(const Message& request) {
  auto meta = request.params.find("_meta");
  if (meta == request.params.end() || !meta->is_object()) return nullptr;
  auto token = meta->find("progressToken");
  if (token == meta->end() || !(token->is_string() || token->is_number_integer())) return nullptr;
  return *token;
}

json McpServer::Initialize(const Message& request, std::string& negotiated) const {
  auto version = request.params.find("protocolVersion");
  if (version == request.params.end() || !version->is_string())
    return RpcError(request.id, rpc::kInvalidParams, "initialize needs params.protocolVersion");
  negotiated = SupportsProtocolVersion(*version) ? version->get<std::string>()
                                                 : SupportedProtocolVersions().front();
  return RpcResult(
      request.id,
      {{"protocolVersion", negotiated},
       {"capabilities", {{"tools", {{"listChanged", false}}}}},
       {"serverInfo", {{"name", "adaptd"}, {"title", "adapt sandboxes"}, {"version", "0.1.0"}}},
       {"instructions",
        "Create a sandbox with create_sandbox (see list_sandbox_environments for images), wait "
        "for it with wait_for_sandbox, run code with run_command or run_python, poll long runs "
        "with get_command_result, and delete it with delete_sandbox when done."}});
}

void McpServer::Answer(const Message& request, ToolContext& ctx,
                       std::function<void(json)> answer) const {
  if (request.method == "tools/call") return CallTool(request, ctx, std::move(answer));
  if (request.method == "ping") return answer(RpcResult(request.id, json::object()));
  if (request.method == "tools/list") return answer(ListTools(request));
  if (request.method == "initialize")
    return answer(RpcError(request.id, rpc::kInvalidRequest, "the session is already initialized"));
  answer(RpcError(request.id, rpc::kMethodNotFound, "method not found: " + request.method));
}

json McpServer::ListTools(const Message& request) const {
  std::string cursor;
  if (request.params.contains("cursor")) {
    if (!request.params["cursor"].is_string())
      return RpcError(request.id, rpc::kInvalidParams, "cursor must be a string");
    cursor = request.params["cursor"];
  }
  auto page = tools_.List(cursor);
  if (!page.ok()) return RpcError(request.id, rpc::kInvalidParams, page.status().message());
  json tools = json::array();
  for (const Tool* t : page->tools) tools.push_back(ToolToJson(*t));
  json result = {{"tools", tools}};
  if (!page->next_cursor.empty()) result["nextCursor"] = page->next_cursor;
  return RpcResult(request.id, result);
}

void McpServer::CallTool(const Message& request, ToolContext& ctx,
                         std::function<void(json)> answer) const {
  auto name = request.params.find("name");
  if (name == request.params.end() || !name->is_string())
    return answer(RpcError(request.id, rpc::kInvalidParams, "tools/call needs params.name"));
  const Tool* tool = tools_.Find(*name);
  if (!tool)
    return answer(
        RpcError(request.id, rpc::kInvalidParams, "unknown tool: " + name->get<std::string>()));
  json args = request.params.value("arguments", json::object());
  if (args.is_null()) args = json::object();
  auto reply = [id = request.id, version = ctx.protocol_version, answer](const ToolResult& result) {
    answer(RpcResult(id, ToolResultToJson(result, version)));
  };
  // An account that signed up and has not registered may read and register, nothing else.
  if (!tool->annotations.read_only && tool->name != kRegisterTool) {
    if (Status st = core::RequireRegistered(ctx.who, "call register_user first"); !st.ok())
      return reply(ToolResult::Fail(FailureSentence(st)));
  }
  if (std::string problem = CheckArguments(tool->input_schema, args); !problem.empty())
    return reply(ToolResult::Fail(problem));
  const auto unexpected = [&tool](const std::exception& e) {
    spdlog::error("MCP tool {} failed: {}", tool->name, e.what());
    return ToolResult::Fail(
        "The tool failed unexpectedly; try again, and report it if it "
        "keeps failing.");
  };
  if (tool->run_later) {
    // Answered once: by the tool, or here when it threw before it could.
    auto once = std::make_shared<std::atomic<bool>>(false);
    ToolReply later = [reply, once](ToolResult result) {
      if (!once->exchange(true)) reply(result);
    };
    try {
      tool->run_later(ctx, args, later);
    } catch (const std::exception& e) {
      later(unexpected(e));
    }
    return;
  }
  ToolResult result;
  try {
    result = tool->run(ctx, args);
  } catch (const std::exception& e) {
    result = unexpected(e);
  }
  reply(result);
}

}  // namespace adapt::mcp
