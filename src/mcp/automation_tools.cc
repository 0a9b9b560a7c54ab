// create_sandbox_automation, list_sandbox_automations, set_sandbox_automation_enabled and
// delete_sandbox_automation over core::AutomationService (seed 000; the descriptions are the
// seed's words). Their runs are read with list_automation_runs (job_tools.cc). MCP's names:
// snake_case.
#include "base/list_cursor.h"
#include "base/time.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

const json kAutomationNullableString = {{"type", json::array({"string", "null"})}};
const json kAutomationId = {{"type", "string"}, {"minLength", 1}, {"maxLength", 128}};

const core::FieldNames& McpAutomationFields() {
  static const core::FieldNames kNames(std::map<std::string, std::string>{{"argv", "command"}});
  return kNames;
}

json AutomationSchema() {
  return {
      {"type", "object"},
      {"properties",
       {{"automation_id", {{"type", "string"}}},
        {"name", {{"type", "string"}}},
        {"kind", {{"type", "string"}}},
        {"sandbox_id", {{"type", "string"}}},
        {"command", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"interval_seconds", {{"type", json::array({"integer", "null"})}}},
        {"cron", kAutomationNullableString},
        {"time_zone", {{"type", "string"}}},
        {"overlap", {{"type", "string"}}},
        {"max_attempts", {{"type", "integer"}}},
        {"enabled", {{"type", "boolean"}}},
        {"paused_reason", kAutomationNullableString},
        {"version",
         {{"type", "integer"}, {"description", "pass it to set_sandbox_automation_enabled"}}},
        {"next_runs",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"description", "a schedule's next five run times (RFC 3339, UTC) while enabled"}}},
        {"desired_state", kAutomationNullableString},
        {"window_seconds", {{"type", json::array({"integer", "null"})}}},
        {"next_changes",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"properties", {{"at", {{"type", "string"}}}, {"state", {{"type", "string"}}}}},
            {"required", json::array({"at", "state"})}}},
          {"description", "a controller's next five changes of the wanted state while enabled"}}}}},
      {"required", json::array({"automation_id", "sandbox_id", "enabled", "version"})}};
}

json AutomationJson(const core::Automation& a) {
  json next = json::array();
  for (int64_t t : a.next_runs) next.push_back(FormatRfc3339(t));
  json changes = json::array();
  for (const auto& c : a.next_changes)
    changes.push_back({{"at", FormatRfc3339(c.at)}, {"state", c.state}});
  bool controller = a.kind == "controller";
  return {{"automation_id", a.id},
          {"name", a.name},
          {"kind", a.kind},
          {"sandbox_id", a.sandbox_id},
          {"command", a.argv},
          {"interval_seconds", a.interval_seconds ? json(a.interval_seconds) : json(nullptr)},
          {"cron", a.cron.empty() ? json(nullptr) : json(a.cron)},
          {"time_zone", a.time_zone},
          {"overlap", a.overlap},
          {"max_attempts", a.max_attempts},
          {"enabled", a.enabled},
          {"paused_reason", a.paused_reason.empty() ? json(nullptr) : json(a.paused_reason)},
          {"version", a.version},
          {"next_runs", next},
          {"desired_state", controller ? json(a.desired_state) : json(nullptr)},
          {"window_seconds", a.window_seconds ? json(a.window_seconds) : json(nullptr)},
          {"next_changes", changes}};
}

json CreateAutomationSchema() {
  return {
      {"type", "object"},
      {"properties",
       {{"kind",
         {{"type", "string"},
          {"enum", json::array({"schedule", "controller", "SandboxSchedule", "SandboxController"})},
          {"description",
           "schedule (default; also SandboxSchedule): command runs on a schedule; controller "
           "(also SandboxController): holds the sandbox in "
           "desired_state, starting or stopping it when it drifts and recreating an instant one "
           "lost to an infrastructure failure (it takes no command)"}}},
        {"desired_state",
         {{"type", "string"},
          {"enum", json::array({"running", "hibernated"})},
          {"description",
           "a controller's state; with interval_seconds or cron, held inside windows of "
           "window_seconds opening at each slot, and the other state outside them"}}},
        {"window_seconds",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 604800},
          {"description",
           "a controller's window length, e.g. 32400 with cron '0 9 * * mon-fri' for "
           "09:00-18:00 on weekdays"}}},
        {"sandbox_id", SandboxIdSchema()},
        {"name", {{"type", "string"}, {"maxLength", 128}}},
        {"command",
         {{"type", "string"},
          {"minLength", 1},
          {"maxLength", 131072},
          {"description",
           "a shell command, run with /bin/sh -c in the sandbox (a schedule's, required)"}}},
        {"cwd", {{"type", "string"}, {"maxLength", 4096}}},
        {"env", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}},
        {"timeout_seconds", {{"type", "integer"}, {"minimum", 1}, {"maximum", 86400}}},
        {"interval_seconds",
         {{"type", "integer"},
          {"minimum", 1},
          {"description", "run every this many seconds; or give cron"}}},
        {"cron",
         {{"type", "string"},
          {"maxLength", 256},
          {"description",
           "5-field cron (minute hour day-of-month month day-of-week) read in time_zone"}}},
        {"time_zone",
         {{"type", "string"},
          {"maxLength", 64},
          {"description",
           "IANA time zone of cron (default UTC); a local time skipped by daylight saving "
           "runs at the next valid instant, a repeated hour runs once"}}},
        {"overlap",
         {{"type", "string"},
          {"enum", json::array({"skip", "buffer_one", "allow", "cancel_previous"})},
          {"description",
           "while a run still executes: skip the slot (default), keep one to run right after "
           "it (buffer_one), run another, or cancel the executing one"}}},
        {"catch_up_seconds",
         {{"type", "integer"},
          {"minimum", 0},
          {"maximum", 604800},
          {"description",
           "after downtime, slots missed within this window run once (default 3600)"}}},
        {"max_attempts",
         {{"type", "integer"},
          {"minimum", 1},
          {"maximum", 10},
          {"description",
           "attempts of one slot on an instant sandbox (default 3): an infrastructure failure "
           "retries in a fresh sandbox, which can run the command a second time"}}}}},
      {"required", json::array({"sandbox_id"})},
      {"additionalProperties", false}};
}

Result<core::CreateAutomationRequest> CreateAutomationFromArguments(const json& args) {
  core::CreateAutomationRequest req;
  req.sandbox_id = args["sandbox_id"].get<std::string>();
  req.name = args.value("name", "");
  req.kind = core::AutomationKindOf(args.value("kind", ""));
  if (args.contains("command")) req.argv = {"/bin/sh", "-c", args["command"].get<std::string>()};
  req.desired_state = args.value("desired_state", "");
  if (args.contains("window_seconds")) req.window_seconds = args["window_seconds"].get<int64_t>();
  req.cwd = args.value("cwd", "");
  if (args.contains("env"))
    for (const auto& [k, v] : args["env"].items()) req.env[k] = v.get<std::string>();
  if (args.contains("timeout_seconds"))
    req.timeout_seconds = args["timeout_seconds"].get<int64_t>();
  if (args.contains("interval_seconds"))
    req.interval_seconds = args["interval_seconds"].get<int64_t>();
  req.cron = args.value("cron", "");
  req.time_zone = args.value("time_zone", "");
  req.overlap = args.value("overlap", "");
  if (args.contains("catch_up_seconds"))
    req.catch_up_seconds = args["catch_up_seconds"].get<int64_t>();
  if (args.contains("max_attempts")) req.max_attempts = args["max_attempts"].get<int64_t>();
  return req;
}

}  // namespace

void AddAutomationTools(ToolRegistry& registry, const ToolServices& services) {
  if (!services.automations) return;
  core::AutomationService& automations = *services.automations;

  registry.Add(
      {"create_sandbox_automation", "Create an automation",
       "Create a restricted SandboxSchedule or desired-state SandboxController. Exec schedules "
       "may start a stopped sandbox, wait for readiness, and clean it up after the run. Durable "
       "sandboxes retain persistent storage; instant sandboxes delete their disposable runtime. "
       "Instant exec schedules retry infrastructure failures in a fresh sandbox up to "
       "max_attempts. Nonzero command exits are application results and are not retried. "
       "Infrastructure placement, identity, storage, network, and security fields are not "
       "accepted.",
       CreateAutomationSchema(), AutomationSchema(), ToolAnnotations{false, true, false, false},
       [&automations](ToolContext& ctx, const json& args) {
         auto req = CreateAutomationFromArguments(args);
         if (!req.ok()) return ToolResult::Fail(FailureSentence(req.status()));
         auto a = automations.Create(ctx.who, *req, McpAutomationFields());
         if (!a.ok()) return ToolResult::Fail(FailureSentence(a.status()));
         return ToolResult::Ok(AutomationJson(*a));
       }});

  registry.Add(
      {"list_sandbox_automations",
       "List automations",
       "List only the authenticated tenant's virtual schedules and controllers.",
       {{"type", "object"},
        {"properties",
         {{"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxPageLimit}}},
          {"cursor", {{"type", "string"}, {"maxLength", 256}}}}},
        {"additionalProperties", false}},
       {{"type", "object"},
        {"properties",
         {{"automations", {{"type", "array"}, {"items", AutomationSchema()}}},
          {"next_cursor", {{"type", json::array({"string", "null"})}}}}},
        {"required", json::array({"automations", "next_cursor"})}},
       ToolAnnotations{true, false, true, false},
       [&automations](ToolContext& ctx, const json& args) {
         PageRequest page{args.value("limit", kDefaultPageLimit), args.value("cursor", "")};
         auto list = automations.List(ctx.who, page);
         if (!list.ok()) return ToolResult::Fail(FailureSentence(list.status()));
         json items = json::array();
         for (const auto& a : list->items) items.push_back(AutomationJson(a));
         json next = list->next_cursor ? json(*list->next_cursor) : json(nullptr);
         return ToolResult::Ok({{"automations", items}, {"next_cursor", next}});
       }});

  registry.Add({"set_sandbox_automation_enabled",
                "Pause or resume an automation",
                "Pause or resume one tenant-owned automation using optimistic concurrency.",
                {{"type", "object"},
                 {"properties",
                  {{"automation_id", kAutomationId},
                   {"enabled", {{"type", "boolean"}}},
                   {"version",
                    {{"type", "integer"},
                     {"minimum", 1},
                     {"description",
                      "the version last read; a stale one is refused and nothing changes"}}}}},
                 {"required", json::array({"automation_id", "enabled", "version"})},
                 {"additionalProperties", false}},
                AutomationSchema(),
                ToolAnnotations{false, true, true, false},
                [&automations](ToolContext& ctx, const json& args) {
                  auto a = automations.SetEnabled(ctx.who, args["automation_id"], args["enabled"],
                                                  args["version"].get<int64_t>());
                  if (!a.ok()) return ToolResult::Fail(FailureSentence(a.status()));
                  return ToolResult::Ok(AutomationJson(*a));
                }});

  registry.Add({"delete_sandbox_automation",
                "Delete an automation",
                "Delete one tenant-owned virtual automation without deleting its sandbox.",
                {{"type", "object"},
                 {"properties", {{"automation_id", kAutomationId}}},
                 {"required", json::array({"automation_id"})},
                 {"additionalProperties", false}},
                {{"type", "object"},
                 {"properties",
                  {{"automation_id", {{"type", "string"}}}, {"deleted", {{"type", "boolean"}}}}},
                 {"required", json::array({"automation_id", "deleted"})}},
                ToolAnnotations{false, true, true, false},
                [&automations](ToolContext& ctx, const json& args) {
                  std::string id = args["automation_id"];
                  Status st = automations.Delete(ctx.who, id);
                  if (!st.ok()) return ToolResult::Fail(FailureSentence(st));
                  return ToolResult::Ok({{"automation_id", id}, {"deleted", true}});
                }});
}

}  // namespace adapt::mcp
