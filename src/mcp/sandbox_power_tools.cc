// stop_sandbox and start_sandbox over core::SandboxService (Stop, Start), and
// get_checkpoint_operation over core::OperationService: the checkpoint or restore each of
// them began.
#include "base/time.h"
#include "core/operation.h"
#include "mcp/sandbox_summary.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

const json kOperationId = {
    {"type", "string"},
    {"maxLength", 64},
    {"description",
     "the operation_id that stop_sandbox, start_sandbox or deploy_sandbox_app returned"}};

// A schema with the operation that get_checkpoint_operation follows.
json WithOperation(json schema) {
  schema["properties"]["operation_id"] = {
      {"type", "string"},
      {"description",
       "the checkpoint (stop) or restore (start) operation; get_checkpoint_operation polls it"}};
  return schema;
}

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

json Stopped(const core::PowerChange& stopped) {
  json out = SandboxSummary(stopped.sandbox);
  const auto& h = stopped.sandbox.hibernation;
  out["workspace"] = h ? json(h->workspace) : json();
  out["processes"] = h ? json(h->processes) : json();
  out["operation_id"] = stopped.operation_id;
  return out;
}

json OperationSchema() {
  const json nullable_string = {{"type", json::array({"string", "null"})}};
  const json kinds = json::array({"checkpoint", "restore", "fork", "app.deploy", "app.rollback"});
  return {{"type", "object"},
          {"properties",
           {{"operation_id", {{"type", "string"}}},
            {"kind", {{"type", "string"}, {"enum", kinds}}},
            {"sandbox_id", {{"type", "string"}, {"description", "an app operation's: its source"}}},
            {"app_id", {{"type", "string"}, {"description", "an app deploy's or rollback's"}}},
            {"phase",
             {{"type", "string"},
              {"enum", json::array({"Pending", "Running", "Completed", "Failed"})}}},
            {"progress_bytes",
             {{"type", "integer"}, {"description", "bytes of the checkpoint image so far"}}},
            {"error", nullable_string},
            {"started_at", nullable_string},
            {"finished_at", nullable_string},
            {"next_action", {{"type", "string"}}}}},
          {"required",
           json::array({"operation_id", "kind", "sandbox_id", "phase", "error", "next_action"})}};
}

std::string NextOperationAction(const core::Operation& op) {
  if (op.phase == "Completed" && op.kind == core::kForkOperation)
    return "The fork (sandbox_id) runs with the checkpoint's processes and files.";
  if (op.kind == core::kAppDeployOperation || op.kind == core::kAppRollbackOperation) {
    if (op.phase == "Completed")
      return op.kind == core::kAppDeployOperation
                 ? "The app is deployed; list_public_apps shows its url."
                 : "The app serves the release it was rolled back to.";
    if (op.phase == "Failed") return "Read error: it says why and which release the app serves.";
    return "Call get_checkpoint_operation again with this operation_id.";
  }
  if (op.phase == "Completed")
    return op.kind == core::kRestoreOperation
               ? "The sandbox is restored; call wait_for_sandbox if it is not ready yet."
               : "The sandbox is stopped with its processes saved; start_sandbox resumes it.";
  if (op.phase == "Failed") return "Read error: it says what happened and where the sandbox is.";
  return "Call get_checkpoint_operation again with this operation_id.";
}

json OperationSummary(const core::Operation& op) {
  auto time = [](const std::optional<int64_t>& t) {
    return t ? json(FormatRfc3339(*t)) : json(nullptr);
  };
  json out = {{"operation_id", op.id},
              {"kind", op.kind},
              {"sandbox_id", op.sandbox_id.value_or("")},
              {"phase", op.phase},
              {"progress_bytes", op.bytes},
              {"error", op.error ? json(*op.error) : json(nullptr)},
              {"started_at", time(op.started_at)},
              {"finished_at", time(op.finished_at)},
              {"next_action", NextOperationAction(op)}};
  if (op.app_id) out["app_id"] = *op.app_id;
  return out;
}

}  // namespace

void AddSandboxPowerTools(ToolRegistry& registry, const ToolServices& services) {
  core::SandboxService& sandboxes = services.sandboxes;

  registry.Add({"stop_sandbox", "Stop a sandbox",
                "Stop compute. Instant workspace data is intentionally discarded.",
                SandboxIdInput(), WithOperation(StoppedSchema()),
                ToolAnnotations{false, true, false, false},
                [&sandboxes](ToolContext& ctx, const json& args) {
                  auto s = sandboxes.Stop(ctx.who, args["sandbox_id"]);
                  if (!s.ok()) return ToolResult::Fail(FailureSentence(s.status()));
                  return ToolResult::Ok(Stopped(*s));
                }});

  registry.Add({"start_sandbox", "Start a stopped sandbox",
                "Start a stopped sandbox, waiting briefly for it. If ready is false, call "
                "wait_for_sandbox until it is.",
                SandboxIdInput(), WithOperation(SandboxSummarySchema()),
                ToolAnnotations{false, true, false, false}, nullptr,
                [&sandboxes](ToolContext& ctx, const json& args, ToolReply reply) {
                  std::string id = args["sandbox_id"];
                  auto started = sandboxes.Start(ctx.who, id);
                  if (!started.ok())
                    return reply(ToolResult::Fail(FailureSentence(started.status())));
                  // The brief wait for it answers later, holding no thread meanwhile.
                  WaitForSandboxReadyLater(
                      sandboxes, ctx, id, 10, [reply, started = *started](Result<core::Sandbox> s) {
                        json out = SandboxSummary(s.ok() ? *s : started.sandbox);
                        out["operation_id"] = started.operation_id;
                        reply(ToolResult::Ok(out));
                      });
                }});

  if (!services.operations) return;
  core::OperationService& operations = *services.operations;
  registry.Add({"get_checkpoint_operation",
                "Get a checkpoint or restore operation",
                "Poll an asynchronous checkpoint or restore request until phase is Completed or "
                "Failed.",
                {{"type", "object"},
                 {"properties", {{"operation_id", kOperationId}}},
                 {"required", json::array({"operation_id"})},
                 {"additionalProperties", false}},
                OperationSchema(),
                ToolAnnotations{true, false, true, false},
                [&operations](ToolContext& ctx, const json& args) {
                  std::string id = args["operation_id"];
                  auto op = operations.Get(ctx.who, id);
                  // Only a sandbox's operations are this tool's: an image pull's id is not one.
                  if (op.ok() && !op->sandbox_id) op = NotFound("operation " + id + " not found");
                  if (!op.ok()) return ToolResult::Fail(FailureSentence(op.status()));
                  return ToolResult::Ok(OperationSummary(*op));
                }});
}

}  // namespace adapt::mcp
