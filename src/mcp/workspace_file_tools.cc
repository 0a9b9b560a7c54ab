// read_workspace_file over core::FileService::ReadText (a bounded UTF-8 read inside a running
// sandbox, or from a durable one's storage while it does not run) and core::StorageFiles (from
// persistent storage named outright). Relative paths resolve under /workspace, as seed 000's
// workspace tools say.
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

constexpr int kDefaultMaxBytes = 256 * 1024;
constexpr int kMaxMaxBytes = 1024 * 1024;

}  // namespace

void AddWorkspaceFileTools(ToolRegistry& registry, const ToolServices& services) {
  core::FileService& files = services.files;
  const core::StorageFiles* storage = services.storage_files;
  json properties = {{"sandbox_id", SandboxIdSchema()},
                     {"workspace_path",
                      {{"type", "string"},
                       {"minLength", 1},
                       {"maxLength", 4096},
                       {"description", "relative to /workspace, or an absolute path"}}},
                     {"max_bytes",
                      {{"type", "integer"},
                       {"minimum", 1},
                       {"maximum", kMaxMaxBytes},
                       {"description", "largest file accepted, default 262144"}}}};
  if (storage)
    properties["storage"] = {
        {"type", "string"},
        {"minLength", 1},
        {"maxLength", 63},
        {"description",
         "persistent storage to read instead of a sandbox (\"default\": the default "
         "workspace); workspace_path then lies under /workspace"}};
  registry.Add({"read_workspace_file",
                "Read a workspace file",
                "Read a UTF-8 artifact from the user's persistent workspace.",
                {{"type", "object"},
                 {"properties", properties},
                 {"required", json::array({"workspace_path"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", {{"type", "string"}}},
                   {"storage", {{"type", "string"}}},
                   {"workspace_path", {{"type", "string"}}},
                   {"text", {{"type", "string"}}},
                   {"bytes", {{"type", "integer"}}}}},
                 {"required", json::array({"workspace_path", "text", "bytes"})}},
                ToolAnnotations{true, false, true, false},
                [&files, storage](ToolContext& ctx, const json& args) {
                  // One source: a sandbox (its storage when it does not run) or storage named
                  // outright.
                  if (args.contains("sandbox_id") == args.contains("storage"))
                    return ToolResult::Fail(storage ? "give either sandbox_id or storage"
                                                    : "sandbox_id is required");
                  std::string path = args["workspace_path"];
                  const size_t max_bytes =
                      static_cast<size_t>(args.value("max_bytes", kDefaultMaxBytes));
                  const bool named = args.contains("storage");
                  const std::string source = named ? args["storage"] : args["sandbox_id"];
                  auto text = named ? storage->ReadText(ctx.who, source, path, max_bytes)
                                    : files.ReadText(ctx.who, source, path, max_bytes);
                  json out = {{"workspace_path", path}, {named ? "storage" : "sandbox_id", source}};
                  if (!text.ok()) return ToolResult::Fail(FailureSentence(text.status()));
                  out["bytes"] = text->size();
                  out["text"] = std::move(*text);
                  return ToolResult::Ok(out);
                }});
}

}  // namespace adapt::mcp
