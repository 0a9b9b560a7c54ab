// deploy_sandbox_app, scale_deployed_app and delete_deployed_app over core::AppService (seed
// 000): a production copy of a sandbox's files on replicas behind one public URL.
#include "base/time.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

const json kString = {{"type", "string"}};
const json kId = {{"type", "string"}, {"minLength", 1}, {"maxLength", 100}};
// The plan's app_replicas caps it (10 on the default plan); past it the tool names the limit.
const json kReplicas = {
    {"type", "integer"},
    {"minimum", 0},
    {"maximum", 100},
    {"description",
     "replicas to run, at most the plan's app_replicas limit (10 on the default plan)"}};

json DeployedAppSchema() {
  return {{"type", "object"},
          {"properties",
           {{"app_id", kString},
            {"name", kString},
            {"url", kString},
            {"http_url", kString},
            {"source_sandbox_id", kString},
            {"release_id", kString},
            {"replicas", {{"type", "integer"}}},
            {"ready_replicas", {{"type", "integer"}}},
            {"replica_sandbox_ids", {{"type", "array"}, {"items", kString}}},
            {"port", {{"type", "integer"}}},
            {"build_exit_code", {{"type", json::array({"integer", "null"})}}},
            {"build_output", kString},
            {"sha256", kString},
            {"created_at", kString},
            {"operation_id",
             {{"type", "string"},
              {"description", "the deploy's operation; get_checkpoint_operation polls it"}}},
            {"phase",
             {{"type", "string"},
              {"enum", json::array({"Running", "Completed"})},
              {"description", "Running: the deploy goes on; poll operation_id"}}},
            {"next_action", kString}}},
          {"required", json::array({"app_id", "name"})}};
}

const core::FieldNames& McpAppFields() {
  static const core::FieldNames kNames;  // the core's names are the tools' names
  return kNames;
}

std::string OptionalString(const json& args, const char* key, const std::string& fallback) {
  return args.contains(key) && args[key].is_string() ? args[key].get<std::string>() : fallback;
}

}  // namespace

json DeployedAppJson(const core::App& a) {
  json ids = json::array();
  for (const auto& r : a.replica_list) ids.push_back(r.sandbox_id);
  json out = {{"app_id", a.id},
              {"name", a.name},
              {"url", a.url},
              {"http_url", a.http_url},
              {"source_sandbox_id", a.source_sandbox_id},
              {"release_id", a.release_id},
              {"replicas", a.replicas},
              {"ready_replicas", a.ready_replicas},
              {"replica_sandbox_ids", ids},
              {"created_at", FormatRfc3339(a.created_at_ms)}};
  if (a.release) {
    out["port"] = a.release->port;
    out["sha256"] = a.release->sha256;
    out["build_exit_code"] =
        a.release->build_exit_code ? json(*a.release->build_exit_code) : json(nullptr);
    out["build_output"] = a.release->build_output;
  }
  return out;
}

void AddDeployedAppTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.apps) return;
  core::AppService& apps = *services.apps;

  registry.Add(
      {"deploy_sandbox_app",
       "Deploy a sandbox app",
       "Publish an app from a sandbox as a production copy on a public URL that anyone can open. "
       "Optionally runs build_command in the source sandbox first (it can change files there), "
       "packages source_path, and starts the app in a separate restricted sandbox. Remove the "
       "public deployment with delete_deployed_app. build_command runs from build_path, which "
       "defaults to source_path. Set build_path=/workspace when a build creates source_path as "
       "its output directory. Each production replica downloads the immutable release from "
       "tenant-isolated object storage into its disposable /workspace.",
       {{"type", "object"},
        {"properties",
         {{"sandbox_id", kId},
          {"name", {{"type", "string"}, {"minLength", 1}, {"maxLength", 30}}},
          {"source_path", {{"type", "string"}, {"minLength", 1}, {"maxLength", 4096}}},
          {"build_command", {{"type", "string"}, {"maxLength", 4096}}},
          {"build_path", {{"type", "string"}, {"minLength", 1}, {"maxLength", 4096}}},
          {"start_command", {{"type", "string"}, {"minLength", 1}, {"maxLength", 4096}}},
          {"port", {{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}}},
          {"replicas", kReplicas},
          {"env", {{"type", "object"}, {"additionalProperties", kString}}},
          {"secrets",
           {{"type", "array"},
            {"maxItems", 64},
            {"items", {{"type", "string"}, {"minLength", 1}, {"maxLength", 128}}},
            {"description",
             "organization secrets by name; each replica sees each as the variable of its name "
             "(values are never shown)"}}},
          {"readiness_path",
           {{"type", "string"},
            {"minLength", 1},
            {"maxLength", 1024},
            {"description",
             "a replica serves once GET of this path answers 2xx or 3xx (default: once its port "
             "accepts connections)"}}},
          {"readiness_timeout_seconds",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 600},
            {"description", "how long a replica may take to become ready (default 120)"}}},
          {"readiness_period_seconds",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 300},
            {"description", "how often a ready replica's check runs again (default 5)"}}},
          {"readiness_failure_threshold",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 10},
            {"description",
             "failed checks in a row that take a ready replica's traffic until one passes "
             "(default 3)"}}}}},
        {"required", json::array({"sandbox_id", "start_command", "port"})},
        {"additionalProperties", false}},
       DeployedAppSchema(),
       ToolAnnotations{false, true, false, true},
       [&apps](ToolContext& ctx, const json& args) {
         core::DeployApp req;
         req.sandbox_id = args["sandbox_id"].get<std::string>();
         req.name = OptionalString(args, "name", "");
         req.source_path = OptionalString(args, "source_path", "/workspace");
         req.build_command = OptionalString(args, "build_command", "");
         req.build_path = OptionalString(args, "build_path", "");
         req.start_command = args["start_command"].get<std::string>();
         req.port = args["port"].get<int64_t>();
         if (args.contains("replicas")) req.replicas = args["replicas"].get<int64_t>();
         if (args.contains("env"))
           for (const auto& [k, v] : args["env"].items()) req.env[k] = v.get<std::string>();
         if (args.contains("secrets"))
           for (const auto& name : args["secrets"]) req.secrets.push_back(name.get<std::string>());
         req.readiness_path = OptionalString(args, "readiness_path", "");
         if (args.contains("readiness_timeout_seconds"))
           req.readiness_timeout_seconds = args["readiness_timeout_seconds"].get<int64_t>();
         if (args.contains("readiness_period_seconds"))
           req.readiness_period_seconds = args["readiness_period_seconds"].get<int64_t>();
         if (args.contains("readiness_failure_threshold"))
           req.readiness_failure_threshold = args["readiness_failure_threshold"].get<int64_t>();
         // A brief wait, as start_sandbox's; a longer deploy answers its operation to poll.
         auto done = apps.Deploy(ctx.who, req, std::chrono::seconds(20), McpAppFields());
         if (!done.ok()) return ToolResult::Fail(FailureSentence(done.status()));
         if (done->app) {
           json out = DeployedAppJson(*done->app);
           out["operation_id"] = done->operation.id;
           out["phase"] = "Completed";
           out["next_action"] = "The app serves at url.";
           return ToolResult::Ok(out);
         }
         return ToolResult::Ok(
             {{"app_id", done->operation.app_id.value_or("")},
              {"name", req.name.empty() ? "app" : req.name},
              {"operation_id", done->operation.id},
              {"phase", "Running"},
              {"next_action",
               "Call get_checkpoint_operation with operation_id until phase is Completed or "
               "Failed; list_public_apps then shows the app's url."}});
       }});

  registry.Add({"scale_deployed_app",
                "Scale a deployed app",
                "Set the number of identical EBS-free production replicas serving an application.",
                {{"type", "object"},
                 {"properties", {{"app_id", kId}, {"replicas", kReplicas}}},
                 {"required", json::array({"app_id", "replicas"})},
                 {"additionalProperties", false}},
                DeployedAppSchema(),
                ToolAnnotations{false, true, true, true},
                [&apps](ToolContext& ctx, const json& args) {
                  auto app = apps.Scale(ctx.who, args["app_id"].get<std::string>(),
                                        args["replicas"].get<int64_t>(), McpAppFields());
                  if (!app.ok()) return ToolResult::Fail(FailureSentence(app.status()));
                  return ToolResult::Ok(DeployedAppJson(*app));
                }});

  registry.Add({"delete_deployed_app",
                "Delete a deployed app",
                "Delete a production copy and its private route without modifying the "
                "development sandbox.",
                {{"type", "object"},
                 {"properties", {{"app_id", kId}}},
                 {"required", json::array({"app_id"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties", {{"app_id", kString}, {"deleted", {{"type", "boolean"}}}}},
                 {"required", json::array({"app_id", "deleted"})}},
                ToolAnnotations{false, true, true, true},
                [&apps](ToolContext& ctx, const json& args) {
                  std::string id = args["app_id"].get<std::string>();
                  Status st = apps.Delete(ctx.who, id);
                  if (!st.ok()) return ToolResult::Fail(FailureSentence(st));
                  return ToolResult::Ok({{"app_id", id}, {"deleted", true}});
                }});
}

}  // namespace adapt::mcp
