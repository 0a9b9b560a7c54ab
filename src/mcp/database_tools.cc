// get_user_database over core::DatabaseService (seed 000; its description is the seed's
// words): the caller's organization's PostgreSQL status. No host, no password: a sandbox
// created with the database gets those in its environment, never a model.
#include "base/time.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json DatabaseJson(const core::DatabaseView& d) {
  return {{"status", d.status},
          {"postgres_version", d.version.empty() ? json(nullptr) : json(d.version)},
          {"size_bytes", d.size_bytes},
          {"quota_bytes", d.quota_bytes},
          {"connections", d.connections},
          {"connection_limit", d.connection_limit},
          {"created_at", d.created_at ? json(FormatRfc3339(d.created_at)) : json(nullptr)}};
}

json DatabaseSchema() {
  json nullable_string = {{"type", json::array({"string", "null"})}};
  return {{"type", "object"},
          {"properties",
           {{"status",
             {{"type", "string"},
              {"description", "not_created, provisioning, ready, over_quota or unavailable"}}},
            {"postgres_version", nullable_string},
            {"size_bytes", {{"type", "integer"}}},
            {"quota_bytes", {{"type", "integer"}}},
            {"connections", {{"type", "integer"}}},
            {"connection_limit", {{"type", "integer"}}},
            {"created_at", nullable_string}}},
          {"required", json::array({"status", "size_bytes", "quota_bytes", "connections",
                                    "connection_limit"})}};
}

}  // namespace

void AddDatabaseTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.databases) return;
  core::DatabaseService& databases = *services.databases;
  registry.Add(
      {"get_user_database",
       "Get database",
       "Return the authenticated tenant's PostgreSQL status without exposing database "
       "credentials.",
       {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}},
       DatabaseSchema(),
       ToolAnnotations{true, false, true, false},
       [&databases](ToolContext& ctx, const json&) {
         auto view = databases.Describe(ctx.who);
         if (!view.ok()) return ToolResult::Fail(FailureSentence(view.status()));
         return ToolResult::Ok(DatabaseJson(*view));
       }});
}

}  // namespace adapt::mcp
