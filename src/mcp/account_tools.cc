// register_user and get_billing_account over core::AccountService (seed 000): the account is
// the caller's organization; these tools never name another.
#include "base/nano_amount.h"
#include "base/time.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json Limit(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

// MCP's words: snake_case, memory in GiB as the sandbox tools take it.
json GiB(const std::optional<int64_t>& mib) {
  return mib ? json(static_cast<double>(*mib) / 1024.0) : json(nullptr);
}

// The 80% / 100% of credits used and of each limit alerts, newest first.
json Alerts(const core::Account& a) {
  json out = json::array();
  for (const auto& alert : core::AlertsNewestFirst(a, 10)) {
    json one = {{"kind", alert.kind}, {"at", FormatRfc3339(alert.at)}};
    if (alert.limit) {
      one["limit"] = alert.limit->limit;
      one["limit_value"] = alert.limit->limit_value;
      one["used"] = alert.limit->used;
    }
    out.push_back(std::move(one));
  }
  return out;
}

json AccountJson(const core::Account& a) {
  const store::PlanRecord& p = a.plan;
  const store::OrgUsageRecord& u = a.usage;
  return {
      {"account_id", a.org_id},
      {"registered", a.registered},
      {"terms_version", a.registered ? json(a.terms_version) : json(nullptr)},
      {"registered_at",
       a.registered && a.registered_at > 0 ? json(FormatRfc3339(a.registered_at)) : json(nullptr)},
      {"plan", {{"id", p.id}, {"name", p.name}}},
      {"limits",
       {{"concurrent_sandboxes", Limit(p.concurrent_sandboxes)},
        {"cpu", Limit(p.cpu)},
        {"memory_gib", GiB(p.memory_mib)},
        {"max_run_seconds", Limit(p.max_run_seconds)},
        {"persistent_storage_gib", Limit(p.persistent_storage_gib)},
        {"object_storage_gib", Limit(p.object_storage_gib)},
        {"gpus", Limit(p.gpus)},
        {"automations", Limit(p.automations)},
        {"queued_jobs", Limit(p.queued_jobs)},
        {"endpoints", Limit(p.endpoints)},
        {"database_mib", Limit(p.database_mib)},
        {"database_connections", Limit(p.database_connections)},
        {"app_replicas", Limit(p.app_replicas)}}},
      {"usage",
       {{"sandboxes", u.sandboxes},
        {"running_sandboxes", u.running_sandboxes},
        {"cpu", u.cpu},
        {"memory_gib", static_cast<double>(u.memory_mib) / 1024.0},
        {"persistent_storage_gib", static_cast<double>(u.persistent_storage_mib) / 1024.0},
        {"object_storage_bytes", u.object_storage_bytes},
        {"endpoints", u.endpoints}}},
      {"balance", FormatNanoAmount(a.balance_nanos)},
      {"balance_nanos", a.balance_nanos},
      {"credits_nanos", a.credits_nanos},
      {"usage_nanos", a.usage_nanos},
      {"alerts", Alerts(a)}};
}

json AccountSchema() {
  json limit = {{"type", json::array({"number", "null"})}, {"description", "null: no limit"}};
  json limits = json::object();
  for (const char* name :
       {"concurrent_sandboxes", "cpu", "memory_gib", "max_run_seconds", "persistent_storage_gib",
        "object_storage_gib", "gpus", "automations", "queued_jobs", "endpoints", "database_mib",
        "database_connections", "app_replicas"})
    limits[name] = limit;
  json usage = json::object();
  for (const char* name : {"sandboxes", "running_sandboxes", "cpu", "memory_gib",
                           "persistent_storage_gib", "object_storage_bytes", "endpoints"})
    usage[name] = {{"type", "number"}};
  return {{"type", "object"},
          {"properties",
           {{"account_id", {{"type", "string"}}},
            {"registered", {{"type", "boolean"}}},
            {"terms_version", {{"type", json::array({"string", "null"})}}},
            {"registered_at", {{"type", json::array({"string", "null"})}}},
            {"plan",
             {{"type", "object"},
              {"properties", {{"id", {{"type", "string"}}}, {"name", {{"type", "string"}}}}}}},
            {"limits", {{"type", "object"}, {"properties", limits}}},
            {"usage", {{"type", "object"}, {"properties", usage}}},
            {"balance",
             {{"type", "string"},
              {"description", "prepaid compute balance, a decimal amount of the currency"}}},
            {"balance_nanos", {{"type", "integer"}}},
            {"credits_nanos",
             {{"type", "integer"}, {"description", "unexpired credits, in nano-units"}}},
            {"usage_nanos",
             {{"type", "integer"}, {"description", "metered usage charged, in nano-units"}}},
            {"alerts",
             {{"type", "array"},
              {"description",
               "balance_80 / balance_100: 80% / 100% of the credits used; limit_80 / "
               "limit_100: of the plan limit named in `limit`"},
              {"items", {{"type", "object"}}}}}}},
          {"required", json::array({"account_id", "registered", "plan", "limits", "usage",
                                    "balance", "balance_nanos"})}};
}

const json kNoArguments = {
    {"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}};

}  // namespace

void AddAccountTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.accounts) return;
  core::AccountService& accounts = *services.accounts;

  registry.Add({"register_user", "Register",
                "Make this signed-in user's account ready to use: accept the operator's terms, "
                "create the billing account on the default plan and its default persistent "
                "storage. Call it once before creating or running anything; calling it again "
                "returns the same account.",
                kNoArguments, AccountSchema(), ToolAnnotations{false, true, true, false},
                [&accounts](ToolContext& ctx, const json&) {
                  auto account = accounts.Register(ctx.who);
                  if (!account.ok()) return ToolResult::Fail(FailureSentence(account.status()));
                  return ToolResult::Ok(AccountJson(*account));
                }});

  registry.Add({"get_billing_account", "Get billing account",
                "Return this authenticated user's plan, limits, and prepaid compute balance.",
                kNoArguments, AccountSchema(), ToolAnnotations{true, false, true, false},
                [&accounts](ToolContext& ctx, const json&) {
                  auto account = accounts.Get(ctx.who);
                  if (!account.ok()) return ToolResult::Fail(FailureSentence(account.status()));
                  return ToolResult::Ok(AccountJson(*account));
                }});
}

}  // namespace adapt::mcp
