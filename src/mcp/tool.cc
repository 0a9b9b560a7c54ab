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

bool HasResourceLinks(const std::string& version) {
  // Revisions are dates (YYYY-MM-DD): they order as strings.
  return version.empty() || version >= "2025-06-18";
}

json ToolResultToJson(const ToolResult& result, const std::string& protocol_version) {
  if (result.is_error)
    return {{"content", json::array({{{"type", "text"}, {"text", result.error}}})},
            {"isError", true}};
  json content = json::array(
      {{{"type", "text"},
        {"text", result.structured.dump(-1, ' ', false, json::error_handler_t::replace)}}});
  if (HasResourceLinks(protocol_version)) {
    for (const auto& link : result.links) {
      json block = {{"type", "resource_link"}, {"uri", link.uri}, {"name", link.name}};
      if (!link.mime_type.empty()) block["mimeType"] = link.mime_type;
      if (link.size) block["size"] = *link.size;
      if (!link.description.empty()) block["description"] = link.description;
      content.push_back(std::move(block));
    }
  }
  return {{"content", content}, {"structuredContent", result.structured}, {"isError", false}};
}

}  // namespace adapt::mcp
