// Object storage tools (seed 000): the organization's private object directory, per-sandbox
// artifacts under artifacts/<sandbox id>/, copies of workspace files, temporary read-only
// download links for exactly one object, sandbox attachment (all core::ObjectService verbs),
// and static websites.
#include "base/text.h"
#include "base/time.h"
#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"
#include "storage/object_key.h"
#include "storage/storage_tokens.h"
#include "storage/workspace_copy.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

constexpr int kDefaultTextBytes = 256 * 1024;
constexpr int kMaxTextBytes = 1024 * 1024;

const json kKey = {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}};
const json kMaxBytes = {{"type", "integer"},
                        {"minimum", 1},
                        {"maximum", kMaxTextBytes},
                        {"description", "largest object accepted, default 262144"}};
const json kTtl = {{"type", "integer"},
                   {"minimum", 1},
                   {"maximum", storage::kMaxUrlTtlSeconds},
                   {"description", "seconds the link stays valid, default 3600"}};
const json kWorkspacePath = {
    {"type", "string"},
    {"minLength", 1},
    {"maxLength", 4096},
    {"description", "relative to /workspace, or an absolute /workspace path"}};

json ObjectSchema() {
  return {{"type", "object"},
          {"properties",
           {{"key", {{"type", "string"}}},
            {"size", {{"type", "integer"}}},
            {"content_type", {{"type", "string"}}},
            {"sha256", {{"type", "string"}}},
            {"last_modified", {{"type", "string"}}}}},
          {"required", json::array({"key", "size", "content_type", "last_modified"})}};
}

json ObjectView(const store::ObjectRecord& o) {
  return {{"key", o.key},
          {"size", o.size},
          {"content_type", o.content_type},
          {"sha256", o.sha256},
          {"last_modified", FormatRfc3339(o.created_at)}};
}

json LinkSchema() {
  return {{"type", "object"},
          {"properties",
           {{"key", {{"type", "string"}}},
            {"name", {{"type", "string"}}},
            {"size", {{"type", "integer"}}},
            {"content_type", {{"type", "string"}}},
            {"download_url", {{"type", "string"}}},
            {"expires_at", {{"type", "string"}}}}},
          {"required", json::array({"key", "name", "size", "download_url", "expires_at"})}};
}

json Link(const core::DownloadLink& link) {
  return {{"key", link.object.key},   {"name", link.name},
          {"size", link.object.size}, {"content_type", link.object.content_type},
          {"download_url", link.url}, {"expires_at", FormatRfc3339(link.expires_at_ms)}};
}

ToolResult LinkResult(core::ObjectService& objects, const core::Principal& who,
                      const std::string& key, const json& args) {
  auto link =
      objects.Link(who, {key, args.value("ttl_seconds", storage::kDefaultUrlTtlSeconds), ""});
  if (!link.ok()) return ToolResult::Fail(FailureSentence(link.status()));
  ToolResult result = ToolResult::Ok(Link(*link));
  // Seed 000's "MCP file reference": the same temporary read-only URL as a resource_link.
  result.links.push_back({link->url, link->name, link->object.content_type, link->object.size,
                          "temporary read-only download of " + link->object.key + ", valid until " +
                              FormatRfc3339(link->expires_at_ms)});
  return result;
}

// Copies the workspace file that `args` names into object storage (as `key`, or under the
// file's own name when empty) and answers the copy's temporary link.
ToolResult CopyWorkspaceFileAndLink(core::ObjectService& objects, const core::Principal& who,
                                    const json& args, const std::string& key) {
  auto rec = objects.CopyFromWorkspace(
      who, {args["sandbox_id"].get<std::string>(), args["workspace_path"].get<std::string>(), key});
  if (!rec.ok()) return ToolResult::Fail(FailureSentence(rec.status()));
  return LinkResult(objects, who, rec->key, args);
}

size_t MaxBytes(const json& args) {
  return static_cast<size_t>(args.value("max_bytes", kDefaultTextBytes));
}

ToolResult TextResult(const Result<core::ObjectText>& text) {
  if (!text.ok()) return ToolResult::Fail(FailureSentence(text.status()));
  return ToolResult::Ok({{"key", text->key}, {"text", text->text}, {"bytes", text->text.size()}});
}

}  // namespace

void AddObjectTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.objects) return;
  core::ObjectService& objects = *services.objects;
  core::SandboxService& sandboxes = services.sandboxes;

  registry.Add({"list_object_storage",
                "List object storage",
                "List the authenticated user's private object directory.",
                {{"type", "object"},
                 {"properties",
                  {{"prefix", {{"type", "string"}, {"maxLength", 1024}}},
                   {"cursor", {{"type", "string"}, {"maxLength", 4200}}},
                   {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 200}}}}},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"prefix", {{"type", "string"}}},
                   {"objects", {{"type", "array"}, {"items", ObjectSchema()}}},
                   {"directories", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                   {"next_cursor", {{"type", json::array({"string", "null"})}}}}},
                 {"required", json::array({"prefix", "objects", "directories", "next_cursor"})}},
                ToolAnnotations{true, false, true, false},
                [&objects](ToolContext& ctx, const json& args) {
                  std::string prefix = args.value("prefix", "");
                  PageRequest page{args.value("limit", kMaxPageLimit), args.value("cursor", "")};
                  auto list = objects.List(ctx.who, {prefix, "/", page});
                  if (!list.ok()) {
                    if (list.status().field() == "cursor")
                      return ToolResult::Fail("The cursor is not valid; list again without it.");
                    return ToolResult::Fail(FailureSentence(list.status()));
                  }
                  json objects = json::array();
                  for (const auto& o : list->items) objects.push_back(ObjectView(o));
                  json next = list->next_cursor ? json(*list->next_cursor) : json();
                  return ToolResult::Ok({{"prefix", prefix},
                                         {"objects", objects},
                                         {"directories", list->common_prefixes},
                                         {"next_cursor", next}});
                }});

  auto text_output = json{{"type", "object"},
                          {"properties",
                           {{"key", {{"type", "string"}}},
                            {"text", {{"type", "string"}}},
                            {"bytes", {{"type", "integer"}}}}},
                          {"required", json::array({"key", "text", "bytes"})}};
  registry.Add({"read_object_storage_text",
                "Read an object as text",
                "Read a bounded UTF-8 object from the authenticated user's private object "
                "directory.",
                {{"type", "object"},
                 {"properties", {{"key", kKey}, {"max_bytes", kMaxBytes}}},
                 {"required", json::array({"key"})},
                 {"additionalProperties", false}},
                text_output,
                ToolAnnotations{true, false, true, false},
                [&objects](ToolContext& ctx, const json& args) {
                  return TextResult(
                      objects.ReadText(ctx.who, args["key"].get<std::string>(), MaxBytes(args)));
                }});

  registry.Add({"list_object_artifacts",
                "List a sandbox's artifacts",
                "List this sandbox's artifacts in tenant-scoped object storage.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
                   {"cursor", {{"type", "string"}, {"maxLength", 4200}}},
                   {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 200}}}}},
                 {"required", json::array({"sandbox_id"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", {{"type", "string"}}},
                   {"prefix", {{"type", "string"}}},
                   {"artifacts", {{"type", "array"}, {"items", ObjectSchema()}}},
                   {"truncated", {{"type", "boolean"}}},
                   {"next_cursor", {{"type", json::array({"string", "null"})}}}}},
                 {"required",
                  json::array({"sandbox_id", "prefix", "artifacts", "truncated", "next_cursor"})}},
                ToolAnnotations{true, false, true, false},
                [&objects](ToolContext& ctx, const json& args) {
                  PageRequest page{args.value("limit", kMaxPageLimit), args.value("cursor", "")};
                  auto list =
                      objects.ListArtifacts(ctx.who, args["sandbox_id"].get<std::string>(), page);
                  if (!list.ok()) {
                    if (list.status().field() == "cursor")
                      return ToolResult::Fail("The cursor is not valid; list again without it.");
                    return ToolResult::Fail(FailureSentence(list.status()));
                  }
                  json items = json::array();
                  for (const auto& o : list->items) items.push_back(ObjectView(o));
                  json next = list->next_cursor ? json(*list->next_cursor) : json();
                  // truncated: more than this page (next_cursor reads the rest).
                  return ToolResult::Ok({{"sandbox_id", list->sandbox_id},
                                         {"prefix", list->prefix},
                                         {"artifacts", items},
                                         {"truncated", list->next_cursor.has_value()},
                                         {"next_cursor", next}});
                }});

  registry.Add({"read_object_text_artifact",
                "Read a sandbox artifact as text",
                "Read a UTF-8 artifact from this user's server-enforced object directory.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()}, {"name", kKey}, {"max_bytes", kMaxBytes}}},
                 {"required", json::array({"sandbox_id", "name"})},
                 {"additionalProperties", false}},
                text_output,
                ToolAnnotations{true, false, true, false},
                [&objects](ToolContext& ctx, const json& args) {
                  return TextResult(
                      objects.ReadArtifactText(ctx.who, args["sandbox_id"].get<std::string>(),
                                               args["name"].get<std::string>(), MaxBytes(args)));
                }});

  registry.Add({"save_workspace_file_to_object_storage",
                "Save a workspace file to object storage",
                "Copy a bounded non-secret file to object storage and return it to ChatGPT. "
                "workspace_path may be relative to /workspace or an absolute /workspace path. The"
                " returned temporary, read-only file reference avoids requiring a second download"
                " tool call. Never copy credentials or tokens.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
                   {"workspace_path", kWorkspacePath},
                   {"key", kKey},
                   {"ttl_seconds", kTtl}}},
                 {"required", json::array({"sandbox_id", "workspace_path"})},
                 {"additionalProperties", false}},
                LinkSchema(),
                ToolAnnotations{false, true, true, false},
                [&objects](ToolContext& ctx, const json& args) {
                  return CopyWorkspaceFileAndLink(objects, ctx.who, args, args.value("key", ""));
                }});

  registry.Add({"download_workspace_artifact",
                "Download a workspace file",
                "Return a workspace file as a downloadable ChatGPT artifact in one operation. Use"
                " this when the user asks to receive a generated file. workspace_path may be "
                "relative to /workspace or an absolute /workspace path. The file is copied to "
                "tenant-isolated object storage and exposed through a temporary, read-only "
                "reference; sandbox credentials and raw base64 are never returned.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
                   {"workspace_path", kWorkspacePath},
                   {"ttl_seconds", kTtl}}},
                 {"required", json::array({"sandbox_id", "workspace_path"})},
                 {"additionalProperties", false}},
                LinkSchema(),
                ToolAnnotations{false, true, true, false},
                [&objects](ToolContext& ctx, const json& args) {
                  return CopyWorkspaceFileAndLink(objects, ctx.who, args, "");
                }});

  registry.Add({"download_object_artifact",
                "Download an object",
                "Return one tenant-scoped object as an MCP file reference that ChatGPT can "
                "download. Use this after list_object_artifacts or "
                "save_workspace_file_to_object_storage when the user asks to receive a generated "
                "file in the conversation. The reference grants temporary read-only access to "
                "exactly one object.",
                {{"type", "object"},
                 {"properties", {{"key", kKey}, {"ttl_seconds", kTtl}}},
                 {"required", json::array({"key"})},
                 {"additionalProperties", false}},
                LinkSchema(),
                ToolAnnotations{true, false, false, false},
                [&objects](ToolContext& ctx, const json& args) {
                  return LinkResult(objects, ctx.who, args["key"].get<std::string>(), args);
                }});

  registry.Add(
      {"attach_sandbox_object_storage",
       "Attach object storage to a sandbox",
       "Give an existing sandbox access to the user's private object storage. Adds the "
       "storage gateway address and an expiring, storage-only token to the sandbox "
       "environment (SANDBOX_STORAGE_ENDPOINT and SANDBOX_STORAGE_TOKEN). A running "
       "sandbox restarts once to pick them up, which ends its running processes; an "
       "instant sandbox also loses the files in its disposable workspace. No cloud or "
       "infrastructure credentials are placed in the sandbox.",
       {{"type", "object"},
        {"properties",
         {{"sandbox_id", SandboxIdSchema()},
          {"ttl_seconds",
           {{"type", "integer"}, {"minimum", 60}, {"maximum", storage::kMaxTokenTtlSeconds}}}}},
        {"required", json::array({"sandbox_id"})},
        {"additionalProperties", false}},
       {{"type", "object"},
        {"properties",
         {{"sandbox_id", {{"type", "string"}}},
          {"endpoint", {{"type", "string"}}},
          {"token_id", {{"type", "string"}}},
          {"expires_at", {{"type", "string"}}},
          {"restarted", {{"type", "boolean"}}},
          {"ready",
           {{"type", "boolean"},
            {"description",
             "true once commands can run; if false, call wait_for_sandbox (start_sandbox for a "
             "stopped sandbox, which is attached without a restart)"}}},
          {"variables", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
        {"required", json::array({"sandbox_id", "endpoint", "token_id", "expires_at", "restarted",
                                  "ready", "variables"})}},
       ToolAnnotations{false, true, false, false},
       nullptr,
       [&objects, &sandboxes](ToolContext& ctx, const json& args, ToolReply reply) {
         auto r =
             objects.AttachToSandbox(ctx.who, args["sandbox_id"].get<std::string>(),
                                     args.value("ttl_seconds", storage::kDefaultTokenTtlSeconds));
         if (!r.ok()) return reply(ToolResult::Fail(FailureSentence(r.status())));
         json out = {
             {"sandbox_id", r->sandbox_id},
             {"endpoint", r->endpoint},
             {"token_id", r->token_id},
             {"expires_at", FormatRfc3339(r->expires_at_ms)},
             {"restarted", r->restarted},
             {"variables", json::array({"SANDBOX_STORAGE_ENDPOINT", "SANDBOX_STORAGE_TOKEN"})}};
         // A restarted sandbox boots again: the brief wait for it, as start_sandbox's, answers
         // later and holds no thread meanwhile, so that the next call finds it running.
         WaitForSandboxReadyLater(sandboxes, ctx, r->sandbox_id, 10,
                                  [reply, out](Result<core::Sandbox> s) mutable {
                                    out["ready"] = s.ok() && s->status == "running";
                                    reply(ToolResult::Ok(out));
                                  });
       }});

  if (!services.sites) return;
  storage::SiteService& sites = *services.sites;
  registry.Add({"publish_static_website",
                "Publish a static website",
                "Publish an object directory as an immutable public static website release. The "
                "source must contain index.html. Publishing copies only this tenant's bounded "
                "source directory to a separate private origin. Returned URLs always include "
                "index.html.",
                {{"type", "object"},
                 {"properties",
                  {{"source",
                    {{"type", "string"},
                     {"maxLength", 1024},
                     {"description", "object prefix holding index.html"}}},
                   {"name", {{"type", "string"}, {"minLength", 1}, {"maxLength", 40}}}}},
                 {"required", json::array({"source"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"site_id", {{"type", "string"}}},
                   {"name", {{"type", "string"}}},
                   {"release_id", {{"type", "string"}}},
                   {"url", {{"type", "string"}}},
                   {"urls", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                   {"files", {{"type", "integer"}}}}},
                 {"required", json::array({"site_id", "name", "release_id", "url", "urls"})}},
                ToolAnnotations{false, true, false, true},
                [&sites](ToolContext& ctx, const json& args) {
                  auto site = sites.Publish(
                      ctx.who.org_id, {args["source"].get<std::string>(), args.value("name", "")});
                  if (!site.ok()) return ToolResult::Fail(FailureSentence(site.status()));
                  return ToolResult::Ok({{"site_id", site->id},
                                         {"name", site->name},
                                         {"release_id", site->release_id},
                                         {"url", site->url},
                                         {"urls", site->urls},
                                         {"files", site->release ? site->release->files : 0}});
                }});
}

}  // namespace adapt::mcp
