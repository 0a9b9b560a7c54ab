#include "mcp/tool.h"

namespace adapt::mcp {

using nlohmann::json;

const json& SandboxIdSchema() {
  static const json schema = {{"type", "string"},
                              {"minLength", 1},
                              {"maxLength", 128},
                              {"description", "the id create_sandbox or list_sandboxes returned"}};
  return schema;
}

json ToolToJson(const Tool& tool) {
  return {{"name", tool.name},
          {"title", tool.title},
          {"description", tool.description},
          {"inputSchema", tool.input_schema},
          {"outputSchema", tool.output_schema},
          {"annotations",
           {{"title", tool.title},
            {"readOnlyHint", tool.annotations.read_only},
            {"destructiveHint", tool.annotations.destructive},
            {"idempotentHint", tool.annotations.idempotent},
            {"openWorldHint", tool.annotations.open_world}}}};
}

json ToolResultToJson(const ToolResult& result) {
  if (result.is_error)
    return {{"content", json::array({{{"type", "text"}, {"text", result.error}}})},
            {"isError", true}};
  return {
      {"content", json::array({{{"type", "text"},
                                {"text", result.structured.dump(
                                             -1, ' ', false, json::error_handler_t::replace)}}})},
      {"structuredContent", result.structured},
      {"isError", false}};
}

}  // namespace adapt::mcp
