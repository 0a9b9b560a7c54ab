// expose_sandbox_app, disable_sandbox_app and list_public_apps over core::EndpointService:
// a temporary public route to one port of a running sandbox, removed without stopping or
// changing the sandbox (seed 000). list_public_apps lists them beside the production copies
// (deploy_sandbox_app, deployed_app_tools.cc).
#include "base/list_cursor.h"
#include "base/time.h"
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
            {"kind", {{"type", "string"}, {"enum", json::array({"preview", "production"})}}},
            {"name", {{"type", "string"}}},
            {"replicas", {{"type", "integer"}}},
            {"ready_replicas", {{"type", "integer"}}},
            {"created_at", {{"type", "string"}}}}},
          {"required", json::array({"app_id", "sandbox_id", "port", "url", "kind"})}};
}

json App(const core::Endpoint& endpoint) {
  return {{"app_id", endpoint.id},
          {"sandbox_id", endpoint.sandbox_id},
          {"port", endpoint.port},
          {"url", endpoint.url},
          {"http_url", endpoint.http_url},
          {"kind", "preview"},
          {"created_at", FormatRfc3339(endpoint.created_at_ms)}};
}

const json kPort = {{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}};

}  // namespace

void AddAppTools(ToolRegistry& registry, const ToolServices& services) {
  core::EndpointService& endpoints = services.endpoints;

  registry.Add({"expose_sandbox_app",
                "Expose a sandbox app",
                "Temporarily expose one port of a running sandbox through a random public HTTPS "
                "hostname.",
                {{"type", "object"},
                 {"properties", {{"sandbox_id", SandboxIdSchema()}, {"port", kPort}}},
                 {"required", json::array({"sandbox_id", "port"})},
                 {"additionalProperties", false}},
                AppSchema(),
                ToolAnnotations{false, true, false, true},
                [&endpoints](ToolContext& ctx, const json& args) {
                  auto made = endpoints.Create(ctx.who, args["sandbox_id"].get<std::string>(),
                                               {args["port"].get<int64_t>()});
                  if (!made.ok()) return ToolResult::Fail(FailureSentence(made.status()));
                  return ToolResult::Ok(App(*made));
                }});

  registry.Add({"disable_sandbox_app",
                "Disable a sandbox app",
                "Remove a temporary public route without stopping or modifying the development "
                "sandbox.",
                {{"type", "object"},
                 {"properties",
                  {{"sandbox_id", SandboxIdSchema()},
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
                  core::RemoveEndpoints request{sandbox_id, std::nullopt, std::nullopt};
                  if (args.contains("app_id"))
                    request.id = args["app_id"].get<std::string>();
                  else
                    request.port = args["port"].get<int64_t>();
                  auto removed = endpoints.Remove(ctx.who, request);
                  if (!removed.ok()) return ToolResult::Fail(FailureSentence(removed.status()));
                  return ToolResult::Ok({{"sandbox_id", sandbox_id}, {"removed", *removed}});
                }});

  registry.Add(
      {"list_public_apps",
       "List public apps",
       "List temporary previews and production copies owned by the authenticated user.",
       {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}},
       {{"type", "object"},
        {"properties", {{"apps", {{"type", "array"}, {"items", AppSchema()}}}}},
        {"required", json::array({"apps"})}},
       ToolAnnotations{true, false, true, false},
       [&endpoints, deployed = services.apps](ToolContext& ctx, const json&) {
         auto listed = endpoints.List(ctx.who, "");
         if (!listed.ok()) return ToolResult::Fail(FailureSentence(listed.status()));
         json apps = json::array();
         for (const auto& e : *listed) apps.push_back(App(e));
         // Every deployed app: the core's pages, newest first, one after another.
         std::vector<core::App> production;
         for (PageRequest page{kMaxPageLimit, ""}; deployed;) {
           auto listed_apps = deployed->List(ctx.who, page);
           if (!listed_apps.ok()) return ToolResult::Fail(FailureSentence(listed_apps.status()));
           production.insert(production.end(), listed_apps->items.begin(),
                             listed_apps->items.end());
           if (!listed_apps->next_cursor) break;
           page.cursor = *listed_apps->next_cursor;
         }
         for (const auto& a : production) {
           json d = DeployedAppJson(a);
           apps.push_back({{"app_id", a.id},
                           {"sandbox_id", a.source_sandbox_id},
                           {"port", d.value("port", 0)},
                           {"url", a.url},
                           {"http_url", a.http_url},
                           {"kind", "production"},
                           {"name", a.name},
                           {"replicas", a.replicas},
                           {"ready_replicas", a.ready_replicas},
                           {"created_at", FormatRfc3339(a.created_at_ms)}});
         }
         return ToolResult::Ok({{"apps", apps}});
       }});
}

}  // namespace adapt::mcp
