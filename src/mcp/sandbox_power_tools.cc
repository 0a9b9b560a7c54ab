// stop_sandbox and start_sandbox over core::SandboxService (Stop, Start).
#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json SandboxIdInput() {
  return {{"type", "object"},
          {"properties", {{"sandbox_id", SandboxIdArgumentSchema()}}},
          {"required", json::array({"sandbox_id"})},
          {"additionalProperties", false}};
}

// The summary, plus what a stop kept: seed 000's instant sandboxes lose their files.
json StoppedSchema() {
  json schema = SandboxSummarySchema();
  schema["properties"]["workspace"] = {{"type", json::array({"string", "null"})},
                                       {"description", "kept (durable) or discarded (instant)"}};
  schema["properties"]["processes"] = {
      {"type", json::array({"string", "null"})},
      {"description", "saved (they resume at start), lost, or discarded"}};
  return schema;
}

json Stopped(const core::Sandbox& sandbox) {
  json out = SandboxSummary(sandbox);
  const auto& h = sandbox.hibernation;
  out["workspace"] = h ? json(h->workspace) : json();
  out["processes"] = h ? json(h->processes) : json();
  return out;
}

}  // namespace

void AddSandboxPowerTools(ToolRegistry& registry, const ToolServices& services) {
  core::SandboxService& sandboxes = services.sandboxes;

  registry.Add(
      {"stop_sandbox", "Stop a sandbox",
       "Stops a running sandbox's compute. A durable sandbox is saved to disk, processes and "
       "files included, and start_sandbox resumes it; an instant sandbox's workspace files are "
       "discarded on purpose, and it starts again fresh from its image.",
       SandboxIdInput(), StoppedSchema(), ToolAnnotations{false, true, false, false},
       [&sandboxes](ToolContext& ctx, const json& args) {
         auto s = sandboxes.Stop(ctx.who, args["sandbox_id"]);
         if (!s.ok()) return ToolResult::Fail(FailureSentence(s.status()));
         return ToolResult::Ok(Stopped(*s));
       }});

  registry.Add(
      {"start_sandbox", "Start a stopped sandbox",
       "Starts a stopped (hibernated) sandbox and waits a few seconds for it. When ready is "
       "false, call wait_for_sandbox until it is true.",
       SandboxIdInput(), SandboxSummarySchema(), ToolAnnotations{false, true, false, false},
       [&sandboxes](ToolContext& ctx, const json& args) {
         std::string id = args["sandbox_id"];
         auto started = sandboxes.Start(ctx.who, id);
         if (!started.ok()) return ToolResult::Fail(FailureSentence(started.status()));
         auto s = WaitForSandboxReady(sandboxes, ctx, id, 10);
         return ToolResult::Ok(SandboxSummary(s.ok() ? *s : *started));
       }});
}

}  // namespace adapt::mcp
