#include "api/automation_json.h"

#include <set>

#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

const std::set<std::string> kAutomationFields = {
    "name",           "sandboxId",       "command", "argv",     "cwd",     "env",
    "timeoutSeconds", "intervalSeconds", "cron",    "timeZone", "overlap", "catchUpSeconds"};

Result<std::optional<int64_t>> AutomationIntField(const json& body, const char* field) {
  if (!body.contains(field) || body[field].is_null()) return std::optional<int64_t>();
  if (!body[field].is_number_integer())
    return InvalidArgument(field, std::string(field) + " must be an integer");
  return std::optional<int64_t>(body[field].get<int64_t>());
}

Result<std::string> AutomationStringField(const json& body, const char* field) {
  if (!body.contains(field) || body[field].is_null()) return std::string();
  if (!body[field].is_string())
    return InvalidArgument(field, std::string(field) + " must be a string");
  return body[field].get<std::string>();
}

}  // namespace

const core::FieldNames& RestAutomationFields() {
  static const core::FieldNames kNames({{"sandbox_id", "sandboxId"},
                                        {"timeout_seconds", "timeoutSeconds"},
                                        {"interval_seconds", "intervalSeconds"},
                                        {"time_zone", "timeZone"},
                                        {"catch_up_seconds", "catchUpSeconds"}});
  return kNames;
}

Result<core::CreateAutomationRequest> CreateAutomationFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, value] : body.items())
    if (!kAutomationFields.count(key)) return InvalidArgument(key, "unknown field '" + key + "'");
  core::CreateAutomationRequest req;
  ASSIGN_OR_RETURN(req.name, AutomationStringField(body, "name"));
  ASSIGN_OR_RETURN(req.sandbox_id, AutomationStringField(body, "sandboxId"));
  bool has_command = body.contains("command") && !body["command"].is_null();
  bool has_argv = body.contains("argv") && !body["argv"].is_null();
  if (has_command == has_argv)
    return InvalidArgument("command", "give exactly one of command (a shell string) or argv");
  if (has_command) {
    if (!body["command"].is_string() || body["command"].get<std::string>().empty())
      return InvalidArgument("command", "command must be a non-empty shell string");
    req.argv = {"/bin/sh", "-c", body["command"].get<std::string>()};
  } else {
    if (!body["argv"].is_array())
      return InvalidArgument("argv", "argv must be an array of strings");
    for (const auto& a : body["argv"]) {
      if (!a.is_string()) return InvalidArgument("argv", "argv must be an array of strings");
      req.argv.push_back(a.get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(req.cwd, AutomationStringField(body, "cwd"));
  if (body.contains("env") && !body["env"].is_null()) {
    if (!body["env"].is_object()) return InvalidArgument("env", "env must be an object of strings");
    for (const auto& [k, v] : body["env"].items()) {
      if (!v.is_string()) return InvalidArgument("env", "env must be an object of strings");
      req.env[k] = v.get<std::string>();
    }
  }
  ASSIGN_OR_RETURN(req.timeout_seconds, AutomationIntField(body, "timeoutSeconds"));
  ASSIGN_OR_RETURN(req.interval_seconds, AutomationIntField(body, "intervalSeconds"));
  ASSIGN_OR_RETURN(req.cron, AutomationStringField(body, "cron"));
  ASSIGN_OR_RETURN(req.time_zone, AutomationStringField(body, "timeZone"));
  ASSIGN_OR_RETURN(req.overlap, AutomationStringField(body, "overlap"));
  ASSIGN_OR_RETURN(req.catch_up_seconds, AutomationIntField(body, "catchUpSeconds"));
  return req;
}

json AutomationToJson(const core::Automation& a) {
  json env = json::array();
  for (const auto& [name, _] : a.env) env.push_back(name);
  json next = json::array();
  for (int64_t t : a.next_runs) next.push_back(FormatRfc3339(t));
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
          {"enabled", a.enabled},
          {"pausedReason", a.paused_reason.empty() ? json(nullptr) : json(a.paused_reason)},
          {"version", a.version},
          {"consecutiveFailures", a.consecutive_failures},
          {"nextRuns", next},
          {"createdAt", FormatRfc3339(a.created_at)},
          {"updatedAt", FormatRfc3339(a.updated_at)}};
}

}  // namespace adapt::api
