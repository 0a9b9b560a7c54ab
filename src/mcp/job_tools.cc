// submit_sandbox_job, list_sandbox_jobs, cancel_sandbox_job, delete_sandbox_job and the runs'
// list_automation_runs, get_automation_run, cancel_automation_run over core::JobService
// (seed 000; the descriptions are the seed's words). MCP's names: snake_case, memory in GiB.
#include <cmath>

#include "base/ids.h"
#include "base/list_cursor.h"
#include "base/request_fingerprint.h"
#include "base/time.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

const json kJobNullableString = {{"type", json::array({"string", "null"})}};
const json kJobNullableInteger = {{"type", json::array({"integer", "null"})}};
const json kJobOrRunId = {{"type", "string"}, {"minLength", 1}, {"maxLength", 128}};

const core::FieldNames& McpJobFields() {
  static const core::FieldNames kNames({{"memory_mib", "memory_gib"},
                                        {"ttl_seconds", "timeout_seconds"},
                                        {"network.egress", "egress"},
                                        {"network", "egress"}});
  return kNames;
}

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json TimeOrNull(int64_t ms) { return ms ? json(FormatRfc3339(ms)) : json(nullptr); }

json JobSchema() {
  return {{"type", "object"},
          {"properties",
           {{"job_id", {{"type", "string"}}},
            {"status",
             {{"type", "string"},
              {"description",
               "queued, running, succeeded, failed, cancelled or infrastructure_failed"}}},
            {"image", {{"type", "string"}}},
            {"command", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"attempts", {{"type", "integer"}}},
            {"max_attempts", {{"type", "integer"}}},
            {"last_run_id", kJobNullableString},
            {"exit_code", kJobNullableInteger},
            {"error", kJobNullableString},
            {"created_at", {{"type", "string"}}},
            {"finished_at", kJobNullableString}}},
          {"required", json::array({"job_id", "status", "attempts", "max_attempts"})}};
}

json JobJson(const core::Job& j) {
  return {{"job_id", j.id},
          {"status", j.status},
          {"image", j.spec.image},
          {"command", j.spec.argv},
          {"attempts", j.attempts},
          {"max_attempts", j.max_attempts},
          {"last_run_id", OrNull(j.last_run_id)},
          {"exit_code", j.exit_code ? json(*j.exit_code) : json(nullptr)},
          {"error", OrNull(j.error)},
          {"created_at", FormatRfc3339(j.created_at)},
          {"finished_at", TimeOrNull(j.finished_at)}};
}

json AutomationRunSchema() {
  return {{"type", "object"},
          {"properties",
           {{"run_id", {{"type", "string"}}},
            {"job_id", kJobNullableString},
            {"automation_id", kJobNullableString},
            {"trigger", {{"type", "string"}}},
            {"attempt", {{"type", "integer"}}},
            {"status",
             {{"type", "string"},
              {"description",
               "queued, starting, running, succeeded, failed, cancelled, skipped_overlap, "
               "skipped_quota, missed or "
               "infrastructure_failed"}}},
            {"sandbox_id", kJobNullableString},
            {"exit_code", kJobNullableInteger},
            {"error", kJobNullableString},
            {"stdout", {{"type", "string"}, {"description", "the latest 64 KiB"}}},
            {"stderr", {{"type", "string"}, {"description", "the latest 64 KiB"}}},
            {"truncated", {{"type", "boolean"}}},
            {"started_at", kJobNullableString},
            {"ended_at", kJobNullableString},
            {"usage",
             {{"type", json::array({"object", "null"})},
              {"description",
               "a job run's metered usage (the ledger's entries for its sandbox, summed): "
               "cpus x ms, MiB x ms, GPUs x ms and the cost in nano-units; null for an "
               "automation's run (its sandbox is shared) and before the run has a sandbox"},
              {"properties",
               {{"cpu_milliseconds", {{"type", "integer"}}},
                {"memory_mib_milliseconds", {{"type", "integer"}}},
                {"gpu_milliseconds", {{"type", "integer"}}},
                {"amount_nanos", {{"type", "integer"}}},
                {"entries", {{"type", "integer"}}}}}}}}},
          {"required", json::array({"run_id", "trigger", "attempt", "status"})}};
}

json RunJson(const core::Run& r, bool with_output) {
  json out = {{"run_id", r.id},
              {"job_id", OrNull(r.job_id)},
              {"automation_id", OrNull(r.automation_id)},
              {"trigger", r.trigger},
              {"attempt", r.attempt},
              {"status", r.status},
              {"sandbox_id", OrNull(r.sandbox_id)},
              {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
              {"error", OrNull(r.error)},
              {"started_at", TimeOrNull(r.started_at)},
              {"ended_at", TimeOrNull(r.ended_at)},
              {"usage", r.usage ? json{{"cpu_milliseconds", r.usage->cpu_millis},
                                       {"memory_mib_milliseconds", r.usage->memory_mib_millis},
                                       {"gpu_milliseconds", r.usage->gpu_millis},
                                       {"amount_nanos", r.usage->amount_nanos},
                                       {"entries", r.usage->entries}}
                                : json(nullptr)}};
  if (with_output) {
    out["stdout"] = r.stdout_text;
    out["stderr"] = r.stderr_text;
    out["truncated"] = r.stdout_truncated || r.stderr_truncated;
  }
  return out;
}

json SubmitSchema() {
  return {{"type", "object"},
          {"properties",
           {{"command",
             {{"type", "string"},
              {"minLength", 1},
              {"maxLength", 131072},
              {"description", "a shell command, run with /bin/sh -c"}}},
            {"image",
             {{"type", "string"},
              {"maxLength", 512},
              {"description",
               "an image alias from list_sandbox_environments; omitted: the default image"}}},
            {"cpu", {{"type", "integer"}, {"minimum", 1}, {"maximum", 32}}},
            {"memory_gib", {{"type", "number"}, {"minimum", 0.125}, {"maximum", 64}}},
            {"env",
             {{"type", "object"},
              {"additionalProperties", {{"type", "string"}}},
              {"description", "environment for the command's sandbox"}}},
            {"secrets",
             {{"type", "array"},
              {"items", {{"type", "string"}}},
              {"maxItems", 32},
              {"description", "names of this account's secrets to attach (redacted from output)"}}},
            {"egress",
             {{"type", "string"},
              {"enum", json::array({"open", "none"})},
              {"description", "outbound network: open (default) or none"}}},
            {"cwd", {{"type", "string"}, {"maxLength", 4096}}},
            {"timeout_seconds",
             {{"type", "integer"},
              {"minimum", 1},
              {"maximum", 86400},
              {"description", "the command's limit and its sandbox's lifetime (default 600)"}}},
            {"max_attempts",
             {{"type", "integer"},
              {"minimum", 1},
              {"maximum", 10},
              {"description",
               "attempts for infrastructure failures (default 3); an attempt that got as far as "
               "starting the command may run it again"}}},
            {"idempotency_key",
             {{"type", "string"},
              {"minLength", 1},
              {"maxLength", 255},
              {"description", "repeat a submit with the same key to get the same job back"}}}}},
          {"required", json::array({"command"})},
          {"additionalProperties", false}};
}

// The arguments passed the input schema, which checks no array's items: secrets' are here.
Result<core::SubmitJob> SubmitFromArguments(const json& args) {
  core::SubmitJob req;
  req.sandbox.surface = core::RequestSurface::kAssistant;  // seed 000's image rule
  req.argv = {"/bin/sh", "-c", args["command"].get<std::string>()};
  if (args.contains("image")) req.sandbox.image = args["image"].get<std::string>();
  if (args.contains("cpu")) req.sandbox.cpu = args["cpu"].get<int64_t>();
  if (args.contains("memory_gib"))
    req.sandbox.memory_mib =
        static_cast<int64_t>(std::llround(args["memory_gib"].get<double>() * 1024));
  if (args.contains("env"))
    for (const auto& [k, v] : args["env"].items()) req.sandbox.env[k] = v.get<std::string>();
  if (args.contains("secrets")) {
    for (const auto& name : args["secrets"]) {
      if (!name.is_string()) return InvalidArgument("secrets", "secrets must be secret names");
      req.sandbox.secrets.push_back(name.get<std::string>());
    }
  }
  if (args.contains("egress")) {
    core::NetworkRequest network;
    network.egress = args["egress"].get<std::string>();
    req.sandbox.network = network;
  }
  if (args.contains("cwd")) req.cwd = args["cwd"].get<std::string>();
  if (args.contains("timeout_seconds"))
    req.timeout_seconds = args["timeout_seconds"].get<int64_t>();
  if (args.contains("max_attempts")) req.max_attempts = args["max_attempts"].get<int64_t>();
  return req;
}

json PageArguments(json extra = json::object()) {
  json props = {{"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxPageLimit}}},
                {"cursor", {{"type", "string"}, {"maxLength", 256}}}};
  for (auto& [k, v] : extra.items()) props[k] = v;
  return {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
}

json IdArgument(const char* name) {
  return {{"type", "object"},
          {"properties", {{name, kJobOrRunId}}},
          {"required", json::array({name})},
          {"additionalProperties", false}};
}

}  // namespace

void AddJobTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.jobs) return;
  core::JobService& jobs = *services.jobs;

  registry.Add(
      {"submit_sandbox_job", "Submit a one-shot job",
       "Submit an immediate one-shot command against an instant sandbox. The worker starts a "
       "fresh disposable Pod, executes asynchronously, retries only infrastructure failures, "
       "and deletes the Pod after completion. Poll list_automation_runs for output and status.",
       SubmitSchema(), JobSchema(), ToolAnnotations{false, true, false, false},
       [&jobs](ToolContext& ctx, const json& args) {
         std::optional<core::IdempotencyRequest> key;
         if (args.contains("idempotency_key"))
           key = core::IdempotencyRequest{
               args["idempotency_key"],
               RequestFingerprint(
                   args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))};
         auto req = SubmitFromArguments(args);
         if (!req.ok()) return ToolResult::Fail(FailureSentence(req.status()));
         auto out = jobs.Submit(ctx.who, *req, key, McpJobFields());
         if (!out.ok()) return ToolResult::Fail(FailureSentence(out.status()));
         return ToolResult::Ok(JobJson(out->job));
       }});

  registry.Add(
      {"list_sandbox_jobs",
       "List one-shot jobs",
       "List the authenticated tenant's retained one-shot job records.",
       PageArguments(),
       {{"type", "object"},
        {"properties",
         {{"jobs", {{"type", "array"}, {"items", JobSchema()}}},
          {"next_cursor", kJobNullableString}}},
        {"required", json::array({"jobs", "next_cursor"})}},
       ToolAnnotations{true, false, true, false},
       [&jobs](ToolContext& ctx, const json& args) {
         core::ListJobsRequest req;
         req.limit = args.value("limit", kDefaultPageLimit);
         req.cursor = args.value("cursor", "");
         auto page = jobs.List(ctx.who, req);
         if (!page.ok()) return ToolResult::Fail(FailureSentence(page.status()));
         json items = json::array();
         for (const auto& j : page->items) items.push_back(JobJson(j));
         return ToolResult::Ok(
             {{"jobs", items},
              {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
       }});

  registry.Add({"cancel_sandbox_job", "Cancel a queued job",
                "Prevent a queued one-shot job from starting; cancel a running attempt by run ID "
                "instead.",
                IdArgument("job_id"), JobSchema(), ToolAnnotations{false, true, true, false},
                [&jobs](ToolContext& ctx, const json& args) {
                  auto job = jobs.Cancel(ctx.who, args["job_id"]);
                  if (!job.ok()) return ToolResult::Fail(FailureSentence(job.status()));
                  return ToolResult::Ok(JobJson(*job));
                }});

  registry.Add(
      {"delete_sandbox_job",
       "Delete a job record",
       "Delete a terminal one-shot job record; associated run history expires "
       "independently.",
       IdArgument("job_id"),
       {{"type", "object"},
        {"properties", {{"job_id", {{"type", "string"}}}, {"deleted", {{"type", "boolean"}}}}},
        {"required", json::array({"job_id", "deleted"})}},
       ToolAnnotations{false, true, true, false},
       [&jobs](ToolContext& ctx, const json& args) {
         std::string id = args["job_id"];
         Status st = jobs.Delete(ctx.who, id);
         if (!st.ok()) return ToolResult::Fail(FailureSentence(st));
         return ToolResult::Ok({{"job_id", id}, {"deleted", true}});
       }});

  registry.Add(
      {"list_automation_runs",
       "List runs",
       "List bounded execution history for the authenticated tenant.",
       PageArguments({{"job_id", kJobOrRunId}, {"automation_id", kJobOrRunId}}),
       {{"type", "object"},
        {"properties",
         {{"runs", {{"type", "array"}, {"items", AutomationRunSchema()}}},
          {"next_cursor", kJobNullableString}}},
        {"required", json::array({"runs", "next_cursor"})}},
       ToolAnnotations{true, false, true, false},
       [&jobs](ToolContext& ctx, const json& args) {
         core::ListRunsRequest req;
         req.job_id = args.value("job_id", "");
         req.automation_id = args.value("automation_id", "");
         req.limit = args.value("limit", kDefaultPageLimit);
         req.cursor = args.value("cursor", "");
         auto page = jobs.ListRuns(ctx.who, req);
         if (!page.ok()) return ToolResult::Fail(FailureSentence(page.status()));
         json items = json::array();
         for (const auto& r : page->items) items.push_back(RunJson(r, true));
         return ToolResult::Ok(
             {{"runs", items},
              {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
       }});

  registry.Add({"get_automation_run", "Get a run",
                "Read one tenant-owned automation run and its bounded output.",
                IdArgument("run_id"), AutomationRunSchema(),
                ToolAnnotations{true, false, true, false},
                [&jobs](ToolContext& ctx, const json& args) {
                  auto run = jobs.GetRun(ctx.who, args["run_id"]);
                  if (!run.ok()) return ToolResult::Fail(FailureSentence(run.status()));
                  return ToolResult::Ok(RunJson(*run, true));
                }});

  registry.Add({"cancel_automation_run", "Cancel a run",
                "Request cancellation and terminate a running scheduled command on a "
                "best-effort basis.",
                IdArgument("run_id"), AutomationRunSchema(),
                ToolAnnotations{false, true, true, false},
                [&jobs](ToolContext& ctx, const json& args) {
                  auto run = jobs.CancelRun(ctx.who, args["run_id"]);
                  if (!run.ok()) return ToolResult::Fail(FailureSentence(run.status()));
                  return ToolResult::Ok(RunJson(*run, false));
                }});
}

}  // namespace adapt::mcp
