// create_persistent_storage, list_persistent_storage, delete_persistent_storage and
// delete_sandbox_keep_storage over storage::VolumeService (seed 000): encrypted persistent
// workspaces that durable sandboxes mount at /workspace.
#include <cmath>

#include "base/time.h"
#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json StorageSchema() {
  return {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"size_mib", {{"type", "integer"}}},
        {"used_bytes", {{"type", json::array({"integer", "null"})}}},
        {"status", {{"type", "string"}, {"description", "ready, creating or deleting"}}},
        {"default", {{"type", "boolean"}, {"description", "the default storage is never deleted"}}},
        {"encrypted", {{"type", "boolean"}}},
        {"mount_path", {{"type", "string"}}},
        {"attachments",
         {{"type", "array"},
          {"description", "sandboxes that mount it now"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"sandbox_id", {{"type", "string"}}}, {"status", {{"type", "string"}}}}},
            {"required", json::array({"sandbox_id", "status"})}}}}},
        {"created_at", {{"type", "string"}}}}},
      {"required", json::array({"name", "size_mib", "status", "default", "attachments"})}};
}

json Storage(const storage::Volume& v) {
  json attachments = json::array();
  for (const auto& a : v.attachments)
    attachments.push_back({{"sandbox_id", a.sandbox_id}, {"status", a.status}});
  return {{"name", v.name},
          {"size_mib", v.size_mib},
          {"used_bytes", v.used_bytes ? json(*v.used_bytes) : json(nullptr)},
          {"status", v.status},
          {"default", v.is_default},
          {"encrypted", v.encrypted},
          {"mount_path", v.mount_path},
          {"attachments", attachments},
          {"created_at", FormatRfc3339(v.created_at)}};
}

// The storage layer names the size `size_mib`; this tool takes size_gib.
Status StorageErrorInToolTerms(const Status& status) {
  if (status.field() == "size_mib")
    return InvalidArgument(
        "size_gib", "size_gib must be between " + std::to_string(storage::limits::kSizeMiBMin) +
                        " MiB and " + std::to_string(storage::limits::kSizeMiBMax / 1024) + " GiB");
  return status;
}

const json kName = {{"type", "string"},
                    {"minLength", 1},
                    {"maxLength", 63},
                    {"description", "lower-case letters, digits and '-'"}};

}  // namespace

void AddStorageTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.volumes) return;
  storage::VolumeService& volumes = *services.volumes;
  core::SandboxService& sandboxes = services.sandboxes;

  registry.Add({"create_persistent_storage",
                "Create persistent storage",
                "Create encrypted persistent storage owned by the authenticated user.",
                {{"type", "object"},
                 {"properties",
                  {{"name", kName},
                   {"size_gib",
                    {{"type", "number"},
                     {"minimum", 0.0625},
                     {"maximum", 128},
                     {"description", "capacity in GiB (default 2)"}}}}},
                 {"required", json::array({"name"})},
                 {"additionalProperties", false}},
                StorageSchema(),
                ToolAnnotations{false, true, false, false},
                [&volumes](ToolContext& ctx, const json& args) {
                  storage::CreateVolumeRequest request;
                  request.name = args["name"];
                  if (args.contains("size_gib"))
                    request.size_mib =
                        static_cast<int64_t>(std::llround(args["size_gib"].get<double>() * 1024));
                  auto made = volumes.Create(ctx.who.org_id, request);
                  if (!made.ok())
                    return ToolResult::Fail(
                        FailureSentence(StorageErrorInToolTerms(made.status())));
                  return ToolResult::Ok(Storage(*made));
                }});

  registry.Add(
      {"list_persistent_storage",
       "List persistent storage",
       "List only the authenticated user's persistent storage and attachment state.",
       {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}},
       {{"type", "object"},
        {"properties", {{"storage", {{"type", "array"}, {"items", StorageSchema()}}}}},
        {"required", json::array({"storage"})}},
       ToolAnnotations{true, false, true, false},
       [&volumes](ToolContext& ctx, const json&) {
         auto list = volumes.List(ctx.who.org_id);
         if (!list.ok()) return ToolResult::Fail(FailureSentence(list.status()));
         json items = json::array();
         for (const auto& v : list->items) items.push_back(Storage(v));
         return ToolResult::Ok({{"storage", items}});
       }});

  registry.Add(
      {"delete_persistent_storage",
       "Delete persistent storage",
       "Permanently delete named persistent storage after exact confirmation; default "
       "storage cannot be deleted.",
       {{"type", "object"},
        {"properties",
         {{"name", kName},
          {"confirm",
           {{"type", "string"},
            {"maxLength", 63},
            {"description", "exactly the name, to confirm the permanent deletion"}}}}},
        {"required", json::array({"name", "confirm"})},
        {"additionalProperties", false}},
       {{"type", "object"},
        {"properties", {{"name", {{"type", "string"}}}, {"deleted", {{"type", "boolean"}}}}},
        {"required", json::array({"name", "deleted"})}},
       ToolAnnotations{false, true, false, false},
       [&volumes](ToolContext& ctx, const json& args) {
         std::string name = args["name"];
         Status st = volumes.Delete(ctx.who.org_id, name, args["confirm"]);
         if (!st.ok()) return ToolResult::Fail(FailureSentence(st));
         return ToolResult::Ok({{"name", name}, {"deleted", true}});
       }});

  registry.Add({"delete_sandbox_keep_storage",
                "Delete a sandbox, keep its storage",
                "Delete sandbox compute after confirmation while retaining independently managed "
                "persistent and object storage. Sandboxes can share named tenant storage, "
                "including the default workspace. Delete non-default storage only with "
                "delete_persistent_storage after all sandbox references have been removed. "
                "Default storage is never deleted.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
                   {"confirm",
                    {{"type", "string"},
                     {"maxLength", 128},
                     {"description", "exactly the sandbox_id, to confirm the deletion"}}}}},
                 {"required", json::array({"sandbox_id", "confirm"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", {{"type", "string"}}},
                   {"status", {{"type", "string"}}},
                   {"deleted", {{"type", "boolean"}, {"description", "false: cleanup still runs"}}},
                   {"kept_storage",
                    {{"type", json::array({"string", "null"})},
                     {"description", "the persistent storage it mounted, kept"}}}}},
                 {"required", json::array({"sandbox_id", "status", "deleted", "kept_storage"})}},
                ToolAnnotations{false, true, true, false},
                [&sandboxes](ToolContext& ctx, const json& args) {
                  std::string id = args["sandbox_id"];
                  if (args["confirm"] != id)
                    return ToolResult::Fail("Set confirm to exactly the sandbox_id '" + id +
                                            "' to delete its compute.");
                  auto before = sandboxes.Get(ctx.who, id);
                  if (!before.ok()) return ToolResult::Fail(FailureSentence(before.status()));
                  json kept =
                      before->config.storage ? json(*before->config.storage) : json(nullptr);
                  ToolResult answer = DeleteSandboxAnswer(sandboxes, ctx, id);
                  if (!answer.is_error) answer.structured["kept_storage"] = kept;
                  return answer;
                }});
}

}  // namespace adapt::mcp
