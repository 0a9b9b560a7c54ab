// read_workspace_file over core::FileService::ReadText: a bounded UTF-8 read inside a running
// sandbox. Relative paths resolve under /workspace, as seed 000's workspace tools say.
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

constexpr int kDefaultMaxBytes = 256 * 1024;
constexpr int kMaxMaxBytes = 1024 * 1024;

}  // namespace

void AddWorkspaceFileTools(ToolRegistry& registry, const ToolServices& services) {
  core::FileService& files = services.files;
  registry.Add({"read_workspace_file",
                "Read a workspace file",
                "Read a UTF-8 artifact from the user's persistent workspace.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
                   {"workspace_path",
                    {{"type", "string"},
                     {"minLength", 1},
                     {"maxLength", 4096},
                     {"description", "relative to /workspace, or an absolute path"}}},
                   {"max_bytes",
                    {{"type", "integer"},
                     {"minimum", 1},
                     {"maximum", kMaxMaxBytes},
                     {"description", "largest file accepted, default 262144"}}}}},
                 {"required", json::array({"sandbox_id", "workspace_path"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", {{"type", "string"}}},
                   {"workspace_path", {{"type", "string"}}},
                   {"text", {{"type", "string"}}},
                   {"bytes", {{"type", "integer"}}}}},
                 {"required", json::array({"sandbox_id", "workspace_path", "text", "bytes"})}},
                ToolAnnotations{true, false, true, false},
                [&files](ToolContext& ctx, const json& args) {
                  std::string sandbox_id = args["sandbox_id"];
                  std::string path = args["workspace_path"];
                  auto text = files.ReadText(
                      ctx.who, sandbox_id, path,
                      static_cast<size_t>(args.value("max_bytes", kDefaultMaxBytes)));
                  if (!text.ok()) return ToolResult::Fail(FailureSentence(text.status()));
                  return ToolResult::Ok({{"sandbox_id", sandbox_id},
                                         {"workspace_path", path},
                                         {"text", *text},
                                         {"bytes", text->size()}});
                }});
}

}  // namespace adapt::mcp
