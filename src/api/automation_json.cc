#include "api/automation_json.h"

#include <set>

#include "api/request_parsing.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

const std::set<std::string> kAutomationFields = {
    "name",        "sandboxId", "command",        "argv",
    "cwd",         "env",       "timeoutSeconds", "intervalSeconds",
    "cron",        "timeZone",  "overlap",        "catchUpSeconds",
    "maxAttempts", "kind",      "desiredState",   "windowSeconds"};

}  // namespace

const core::FieldNames& RestAutomationFields() {
  static const core::FieldNames kNames({{"sandbox_id", "sandboxId"},
                                        {"timeout_seconds", "timeoutSeconds"},
                                        {"interval_seconds", "intervalSeconds"},
                                        {"time_zone", "timeZone"},
                                        {"catch_up_seconds", "catchUpSeconds"},
                                        {"max_attempts", "maxAttempts"},
                                        {"desired_state", "desiredState"},
                                        {"window_seconds", "windowSeconds"}});
  return kNames;
}

Result<core::CreateAutomationRequest> CreateAutomationFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, value] : body.items())
    if (!kAutomationFields.count(key)) return InvalidArgument(key, "unknown field '" + key + "'");
  core::CreateAutomationRequest req;
  ASSIGN_OR_RETURN(req.name, OptionalStringField(body, "name"));
  ASSIGN_OR_RETURN(req.sandbox_id, OptionalStringField(body, "sandboxId"));
  ASSIGN_OR_RETURN(req.kind, OptionalStringField(body, "kind"));
  req.kind = core::AutomationKindOf(req.kind);
  if (!req.kind.empty() && req.kind != "schedule" && req.kind != "controller")
    return InvalidArgument(
        "kind", "kind must be schedule or controller (SandboxSchedule, SandboxController)");
  // A controller runs no command: one given is refused by the core verb.
  bool command_given = (body.contains("command") && !body["command"].is_null()) ||
                       (body.contains("argv") && !body["argv"].is_null());
  if (req.kind != "controller" || command_given) {
    ASSIGN_OR_RETURN(req.argv, CommandArgvFromJson(body));
  }
  ASSIGN_OR_RETURN(req.cwd, OptionalStringField(body, "cwd"));
  if (body.contains("env") && !body["env"].is_null()) {
    if (!body["env"].is_object()) return InvalidArgument("env", "env must be an object of strings");
    for (const auto& [k, v] : body["env"].items()) {
      if (!v.is_string()) return InvalidArgument("env", "env must be an object of strings");
      req.env[k] = v.get<std::string>();
    }
  }
  ASSIGN_OR_RETURN(req.timeout_seconds, OptionalIntField(body, "timeoutSeconds"));
  ASSIGN_OR_RETURN(req.interval_seconds, OptionalIntField(body, "intervalSeconds"));
  ASSIGN_OR_RETURN(req.cron, OptionalStringField(body, "cron"));
  ASSIGN_OR_RETURN(req.time_zone, OptionalStringField(body, "timeZone"));
  ASSIGN_OR_RETURN(req.overlap, OptionalStringField(body, "overlap"));
  ASSIGN_OR_RETURN(req.catch_up_seconds, OptionalIntField(body, "catchUpSeconds"));
  ASSIGN_OR_RETURN(req.max_attempts, OptionalIntField(body, "maxAttempts"));
  ASSIGN_OR_RETURN(req.desired_state, OptionalStringField(body, "desiredState"));
  ASSIGN_OR_RETURN(req.window_seconds, OptionalIntField(body, "windowSeconds"));
  return req;
}

json AutomationToJson(const core::Automation& a) {
  json env = json::array();
  for (const auto& [name, _] : a.env) env.push_back(name);
  json next = json::array();
  for (int64_t t : a.next_runs) next.push_back(FormatRfc3339(t));
  json changes = json::array();
  for (const auto& c : a.next_changes)
    changes.push_back({{"at", FormatRfc3339(c.at)}, {"state", c.state}});
  bool controller = a.kind == "controller";
  return {{"id", a.id},
          {"name", a.name},
          {"kind", a.kind},
          {"sandboxId", a.sandbox_id},
          {"argv", a.argv},
          {"cwd", a.cwd.empty() ? json(nullptr) : json(a.cwd)},
          {"envNames", env},
          {"timeoutSeconds", a.timeout_seconds},
          {"intervalSeconds", a.interval_seconds ? json(a.interval_seconds) : json(nullptr)},
          {"cron", a.cron.empty() ? json(nullptr) : json(a.cron)},
          {"timeZone", a.time_zone},
          {"overlap", a.overlap},
          {"catchUpSeconds", a.catch_up_seconds},
          {"maxAttempts", a.max_attempts},
          {"enabled", a.enabled},
          {"pausedReason", a.paused_reason.empty() ? json(nullptr) : json(a.paused_reason)},
          {"version", a.version},
          {"consecutiveFailures", a.consecutive_failures},
          {"nextRuns", next},
          {"desiredState", controller ? json(a.desired_state) : json(nullptr)},
          {"windowSeconds", a.window_seconds ? json(a.window_seconds) : json(nullptr)},
          {"nextChanges", changes},
          {"createdAt", FormatRfc3339(a.created_at)},
          {"updatedAt", FormatRfc3339(a.updated_at)}};
}

}  // namespace adapt::api
