// create_sandbox, create_gpu_sandbox, get_sandbox, list_sandboxes, wait_for_sandbox and
// delete_sandbox over core::SandboxService. Results use seed 000's snake_case words.
#include <chrono>

#include "base/list_cursor.h"
#include "base/time.h"
#include "mcp/sandbox_arguments.h"
#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

const json kNullableString = {{"type", json::array({"string", "null"})}};

json SandboxSchema() {
  return {{"type", "object"},
          {"properties",
           {{"sandbox_id", {{"type", "string"}, {"description", "the sandbox's id"}}},
            {"status", {{"type", "string"}, {"description", "provisioning, running, failed, ..."}}},
            {"ready", {{"type", "boolean"}, {"description", "true once commands can run"}}},
            {"image", kNullableString},
            {"cpu", {{"type", "integer"}}},
            {"memory_gib", {{"type", "number"}}},
            {"security_profile", {{"type", "string"}}},
            {"startup_class", {{"type", "string"}}},
            {"idle_timeout_seconds",
             {{"type", json::array({"integer", "null"})},
              {"description", "hibernated after this many seconds unused; null: never"}}},
            {"name", kNullableString},
            {"created_at", {{"type", "string"}}},
            {"expires_at", kNullableString},
            {"error", kNullableString},
            {"termination_reason", kNullableString},
            {"next_action", {{"type", "string"}, {"description", "what to do next"}}}}},
          {"required", json::array({"sandbox_id", "status", "ready", "next_action"})}};
}

std::string NextAction(const std::string& status) {
  if (status == "running") return "Run code with run_command or run_python using this sandbox_id.";
  if (status == "provisioning")
    return "Call wait_for_sandbox with this sandbox_id until ready is true.";
  if (status == "hibernated")
    return "This sandbox is stopped; call start_sandbox with this sandbox_id to start it.";
  if (status == "deleting" || status == "deleted")
    return "This sandbox is deleted; create a new one with create_sandbox.";
  return "This sandbox will not become ready; read error, then delete it with delete_sandbox "
         "and create a new one.";
}

json Summary(const core::Sandbox& s) {
  auto text = [](const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); };
  auto name = s.config.labels.find("name");
  return {{"sandbox_id", s.id},
          {"status", s.status},
          {"ready", s.status == "running"},
          {"image", s.config.image.empty() ? json(nullptr) : json(s.config.image)},
          {"cpu", s.config.cpu},
          {"memory_gib", static_cast<double>(s.config.memory_mib) / 1024.0},
          {"security_profile", s.config.security_profile},
          {"startup_class", s.config.startup_class},
          {"idle_timeout_seconds",
           s.config.idle_timeout_seconds ? json(*s.config.idle_timeout_seconds) : json(nullptr)},
          {"name", name == s.config.labels.end() ? json(nullptr) : json(name->second)},
          {"created_at", FormatRfc3339(s.created_at)},
          {"expires_at", s.expires_at ? json(FormatRfc3339(*s.expires_at)) : json(nullptr)},
          {"error", text(s.error)},
          {"termination_reason", text(s.termination_reason)},
          {"next_action", NextAction(s.status)}};
}

json CreateInputSchema(bool gpu) {
  json props = {
      {"image",
       {{"type", "string"},
        {"maxLength", 512},
        {"description",
         "an image alias from list_sandbox_environments; omitted: the default image"}}},
      {"memory_gib",
       {{"type", "number"},
        {"minimum", 0.125},
        {"maximum", 64},
        {"description", "memory reserved for the sandbox, in GiB (default 1)"}}},
      {"cpu", {{"type", "integer"}, {"minimum", 1}, {"maximum", 32}, {"description", "vCPUs"}}},
      {"security_profile",
       {{"type", "string"},
        {"enum", json::array({"restricted", "developer"})},
        {"description", "restricted (default); developer allows package managers"}}},
      {"startup_class",
       {{"type", "string"},
        {"enum", json::array({"durable", "instant"})},
        {"description", "instant: disposable workspace; durable: persistent workspace"}}},
      {"storage",
       {{"type", "string"},
        {"maxLength", 63},
        {"description",
         "durable only: the persistent storage to mount at /workspace (default: default)"}}},
      {"ttl_seconds",
       {{"type", "integer"},
        {"minimum", 1},
        {"maximum", 86400},
        {"description", "the sandbox is deleted this long after creation (default 3600)"}}},
      {"name", {{"type", "string"}, {"maxLength", 256}, {"description", "a label to find it by"}}}};
  json schema = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
  if (gpu) {
    schema["properties"]["gpu_type"] = {
        {"type", "string"}, {"maxLength", 64}, {"description", "a GPU type from list_gpu_types"}};
    schema["required"] = json::array({"gpu_type"});
  }
  return schema;
}

}  // namespace

void AddSandboxTools(ToolRegistry& registry, const ToolServices& services) {
  core::SandboxService& sandboxes = services.sandboxes;

  registry.Add({"create_sandbox", "Create a sandbox",
                "Create a CPU sandbox using an administrator-approved environment image. Call "
                "list_sandbox_environments, then set image to an advertised CPU alias. Use "
                "restricted by default, or developer to permit apt-get with a limited capability "
                "set; when developer_public_images is listed as true, developer also accepts any "
                "public container image. Runtime system-package installs are ephemeral. Set "
                "memory_gib to reserve more memory; it is a fixed reservation, not a burst "
                "ceiling. startup_class=durable keeps the current encrypted persistent workspace."
                " startup_class=instant uses a disposable workspace on platform-selected "
                "capacity, with no persistent attachment, checkpoint, automatic object save, or "
                "automatic restart after infrastructure loss. Scheduled jobs can recreate it and "
                "retry infrastructure failures. Use the provided tenant-scoped object storage "
                "gateway explicitly for any files that must survive. Creation waits briefly; if "
                "ready is false, call wait_for_sandbox until it is true.",
                CreateInputSchema(false), SandboxSchema(),
                ToolAnnotations{false, true, false, false}, nullptr,
                [&sandboxes](ToolContext& ctx, const json& args, ToolReply reply) {
                  auto created = sandboxes.Create(ctx.who, CreateSandboxFromArguments(args),
                                                  std::nullopt, McpSandboxFields());
                  if (!created.ok())
                    return reply(ToolResult::Fail(FailureSentence(created.status())));
                  // The brief wait for it to boot answers later, holding no thread meanwhile.
                  WaitForSandboxReadyLater(sandboxes, ctx, created->id, 10,
                                           [reply, created = *created](Result<core::Sandbox> s) {
                                             reply(ToolResult::Ok(Summary(s.ok() ? *s : created)));
                                           });
                }});

  registry.Add({"create_gpu_sandbox", "Create a GPU sandbox",
                "Create an isolated one-GPU ATL sandbox. Call list_gpu_types and "
                "list_sandbox_environments first, then select gpu_type and a GPU image alias. "
                "This waits briefly, but GPU capacity can take several minutes to schedule when "
                "autoscaling starts from zero. If ready is false, keep calling wait_for_sandbox "
                "until it is true, then use run_python to verify torch.cuda or run_command with "
                "nvidia-smi. Use security_profile=developer when apt-get must install system "
                "packages; it adds only the package-manager capability set, and accepts any "
                "public image when developer_public_images is true. l4-3gb requires "
                "startup_class=instant and uses disposable storage with no checkpoint, automatic "
                "save, or restart after capacity loss. Lower-cost interruptible capacity is "
                "preferred with standard-capacity fallback.",
                CreateInputSchema(true), SandboxSchema(),
                ToolAnnotations{false, true, false, false},
                [&sandboxes](ToolContext& ctx, const json&) {
                  // The plan's gpus limit is enforced even though this host has none.
                  Status allowed = sandboxes.CheckGpuLimit(ctx.who, McpSandboxFields());
                  if (!allowed.ok()) return ToolResult::Fail(FailureSentence(allowed));
                  return ToolResult::Fail(
                      "This node has no GPUs (list_gpu_types is empty); create a CPU sandbox "
                      "with create_sandbox instead.");
                }});

  registry.Add({"get_sandbox",
                "Get a sandbox",
                "Inspect one sandbox without waiting. To wait for startup, call wait_for_sandbox "
                "instead.",
                {{"type", "object"},
                 {"properties", {{"sandbox_id", SandboxIdSchema()}}},
                 {"required", json::array({"sandbox_id"})},
                 {"additionalProperties", false}},
                SandboxSchema(),
                ToolAnnotations{true, false, true, false},
                [&sandboxes](ToolContext& ctx, const json& args) {
                  auto s = sandboxes.Get(ctx.who, args["sandbox_id"]);
                  if (!s.ok()) return ToolResult::Fail(FailureSentence(s.status()));
                  return ToolResult::Ok(Summary(*s));
                }});

  registry.Add({"list_sandboxes",
                "List sandboxes",
                "List this user's ATL sandboxes and their lifecycle state.",
                {{"type", "object"},
                 {"properties",
                  {{"query",
                    {{"type", "string"},
                     {"maxLength", 256},
                     {"description", "part of a sandbox's name, or the start of its id"}}},
                   {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxPageLimit}}},
                   {"cursor", {{"type", "string"}, {"maxLength", 256}}}}},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"sandboxes", {{"type", "array"}, {"items", SandboxSchema()}}},
                   {"next_cursor", kNullableString}}},
                 {"required", json::array({"sandboxes", "next_cursor"})}},
                ToolAnnotations{true, false, true, false},
                [&sandboxes](ToolContext& ctx, const json& args) {
                  core::ListSandboxesRequest req;
                  req.query = args.value("query", "");
                  req.limit = args.value("limit", kDefaultPageLimit);
                  req.cursor = args.value("cursor", "");
                  auto page = sandboxes.List(ctx.who, req);
                  if (!page.ok()) return ToolResult::Fail(FailureSentence(page.status()));
                  json items = json::array();
                  for (const auto& s : page->items) items.push_back(Summary(s));
                  json next = page->next_cursor ? json(*page->next_cursor) : json(nullptr);
                  return ToolResult::Ok({{"sandboxes", items}, {"next_cursor", next}});
                }});

  registry.Add({"wait_for_sandbox",
                "Wait for a sandbox",
                "Wait up to about 40 seconds for a starting sandbox to become ready. Use this "
                "after create or start returns ready=false. While the sandbox is still starting "
                "it returns ready=false with a next_action, and calling it again continues "
                "waiting. A GPU sandbox can take up to 10 minutes to start, which is expected "
                "rather than a failure.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
                   {"timeout_seconds",
                    {{"type", "integer"},
                     {"minimum", 1},
                     {"maximum", 40},
                     {"description", "how long to wait at most (default 40)"}}}}},
                 {"required", json::array({"sandbox_id"})},
                 {"additionalProperties", false}},
                SandboxSchema(),
                ToolAnnotations{true, false, true, false},
                nullptr,
                [&sandboxes](ToolContext& ctx, const json& args, ToolReply reply) {
                  // Answers when the wait ends, holding no thread meanwhile.
                  WaitForSandboxReadyLater(
                      sandboxes, ctx, args["sandbox_id"], args.value("timeout_seconds", 40),
                      [reply](Result<core::Sandbox> s) {
                        if (!s.ok()) return reply(ToolResult::Fail(FailureSentence(s.status())));
                        reply(ToolResult::Ok(Summary(*s)));
                      });
                }});

  registry.Add(
      {"delete_sandbox",
       "Delete a sandbox",
       "Delete sandbox compute. Instant workspace data is discarded with its Pod.",
       {{"type", "object"},
        {"properties", {{"sandbox_id", SandboxIdSchema()}}},
        {"required", json::array({"sandbox_id"})},
        {"additionalProperties", false}},
       {{"type", "object"},
        {"properties",
         {{"sandbox_id", {{"type", "string"}}},
          {"status", {{"type", "string"}}},
          {"deleted", {{"type", "boolean"}, {"description", "false: cleanup still runs"}}}}},
        {"required", json::array({"sandbox_id", "status", "deleted"})}},
       ToolAnnotations{false, true, true, false},
       [&sandboxes](ToolContext& ctx, const json& args) {
         return DeleteSandboxAnswer(sandboxes, ctx, args["sandbox_id"].get<std::string>());
       }});
}

json SandboxSummary(const core::Sandbox& sandbox) { return Summary(sandbox); }
json SandboxSummarySchema() { return SandboxSchema(); }
json SandboxIdArgumentSchema() { return SandboxIdSchema(); }

ToolResult DeleteSandboxAnswer(core::SandboxService& sandboxes, ToolContext& ctx,
                               const std::string& id) {
  auto outcome = sandboxes.Delete(ctx.who, id);
  if (!outcome.ok()) return ToolResult::Fail(FailureSentence(outcome.status()));
  auto s = sandboxes.Get(ctx.who, id);
  std::string status = s.ok() ? s->status : "deleted";
  return ToolResult::Ok(
      {{"sandbox_id", id}, {"status", status}, {"deleted", outcome->done || status == "deleted"}});
}

}  // namespace adapt::mcp
