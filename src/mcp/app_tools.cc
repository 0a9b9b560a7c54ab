// expose_sandbox_app, disable_sandbox_app and list_public_apps over core::EndpointService:
// a temporary public route to one port of a running sandbox, removed without stopping or
// changing the sandbox (seed 000). Production copies (deploy_sandbox_app) do not exist yet,
// so list_public_apps lists the temporary previews only.
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json AppSchema() {
  return {{"type", "object"},
          {"properties",
           {{"app_id", {{"type", "string"}}},
            {"sandbox_id", {{"type", "string"}}},
            {"port", {{"type", "integer"}}},
            {"url", {{"type", "string"}}},
            {"http_url", {{"type", "string"}}},
            {"kind", {{"type", "string"}, {"enum", json::array({"preview"})}}},
            {"created_at", {{"type", "string"}}}}},
          {"required", json::array({"app_id", "sandbox_id", "port", "url", "kind"})}};
}

json App(const json& endpoint) {
  return {{"app_id", endpoint.value("id", "")},
          {"sandbox_id", endpoint.value("sandboxId", "")},
          {"port", endpoint.value("port", 0)},
          {"url", endpoint.value("url", "")},
          {"http_url", endpoint.value("httpUrl", "")},
          {"kind", "preview"},
          {"created_at", endpoint.value("createdAt", "")}};
}

const json kSandboxId = {{"type", "string"}, {"minLength", 1}, {"maxLength", 100}};
const json kPort = {{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}};

}  // namespace

void AddAppTools(ToolRegistry& registry, const ToolServices& services) {
  core::EndpointService& endpoints = services.endpoints;

  registry.Add({"expose_sandbox_app",
                "Expose a sandbox app",
                "Publishes one port of a running sandbox on a random public HTTPS hostname (and "
                "plain HTTP), without stopping the sandbox. Anyone with the URL can reach it "
                "until disable_sandbox_app removes it or the sandbox ends. Not available for "
                "sandboxes created without networking.",
                {{"type", "object"},
                 {"properties", {{"sandbox_id", kSandboxId}, {"port", kPort}}},
                 {"required", json::array({"sandbox_id", "port"})},
                 {"additionalProperties", false}},
                AppSchema(),
                ToolAnnotations{false, true, false, true},
                [&endpoints](ToolContext& ctx, const json& args) {
                  auto made = endpoints.Create(ctx.who, args["sandbox_id"].get<std::string>(),
                                               {{"port", args["port"]}});
                  if (!made.ok()) return ToolResult::Fail(FailureSentence(made.status()));
                  return ToolResult::Ok(App(*made));
                }});

  registry.Add(
      {"disable_sandbox_app",
       "Disable a sandbox app",
       "Removes a temporary public route (by app_id, or every route to port) without stopping "
       "or modifying the sandbox. Removing a route that is already gone succeeds.",
       {{"type", "object"},
        {"properties",
         {{"sandbox_id", kSandboxId},
          {"app_id", {{"type", "string"}, {"minLength", 1}, {"maxLength", 100}}},
          {"port", kPort}}},
        {"required", json::array({"sandbox_id"})},
        {"additionalProperties", false}},
       {{"type", "object"},
        {"properties",
         {{"sandbox_id", {{"type", "string"}}},
          {"removed", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
        {"required", json::array({"sandbox_id", "removed"})}},
       ToolAnnotations{false, true, true, true},
       [&endpoints](ToolContext& ctx, const json& args) {
         std::string sandbox_id = args["sandbox_id"];
         if (!args.contains("app_id") && !args.contains("port"))
           return ToolResult::Fail("Name the route to remove with app_id or port.");
         auto listed = endpoints.List(ctx.who, sandbox_id);
         if (!listed.ok()) return ToolResult::Fail(FailureSentence(listed.status()));
         json removed = json::array();
         for (const auto& e : (*listed)["items"]) {
           bool match = args.contains("app_id") ? e.value("id", "") == args["app_id"]
                                                : e.value("port", 0) == args["port"];
           if (!match) continue;
           Status st = endpoints.Delete(ctx.who, sandbox_id, e.value("id", ""));
           if (!st.ok() && st.code() != Code::kNotFound)
             return ToolResult::Fail(FailureSentence(st));
           removed.push_back(e.value("id", ""));
         }
         return ToolResult::Ok({{"sandbox_id", sandbox_id}, {"removed", removed}});
       }});

  registry.Add(
      {"list_public_apps",
       "List public apps",
       "Lists the temporary public routes (previews) of this account's sandboxes, with "
       "their URLs.",
       {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}},
       {{"type", "object"},
        {"properties", {{"apps", {{"type", "array"}, {"items", AppSchema()}}}}},
        {"required", json::array({"apps"})}},
       ToolAnnotations{true, false, true, false},
       [&endpoints](ToolContext& ctx, const json&) {
         auto listed = endpoints.List(ctx.who, "");
         if (!listed.ok()) return ToolResult::Fail(FailureSentence(listed.status()));
         json apps = json::array();
         for (const auto& e : (*listed)["items"]) apps.push_back(App(e));
         return ToolResult::Ok({{"apps", apps}});
       }});
}

}  // namespace adapt::mcp
