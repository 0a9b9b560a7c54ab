#include "api/app_json.h"

#include <set>

#include "api/request_parsing.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using json = nlohmann::json;

// The member when given; `out` keeps its default when absent.
Status StringField(const json& body, const char* field, std::string& out) {
  ASSIGN_OR_RETURN(std::string value, OptionalStringField(body, field));
  if (body.contains(field) && !body[field].is_null()) out = std::move(value);
  return Status::Ok();
}

Status IntField(const json& body, const char* field, int64_t& out) {
  ASSIGN_OR_RETURN(std::optional<int64_t> value, OptionalIntField(body, field));
  if (value) out = *value;
  return Status::Ok();
}

}  // namespace

const core::FieldNames& RestAppFields() {
  static const core::FieldNames kNames(
      {{"sandbox_id", "sandboxId"},
       {"source_path", "sourcePath"},
       {"build_command", "buildCommand"},
       {"build_path", "buildPath"},
       {"build_timeout_seconds", "buildTimeoutSeconds"},
       {"start_command", "startCommand"},
       {"release_id", "releaseId"},
       {"readiness_path", "readinessPath"},
       {"readiness_timeout_seconds", "readinessTimeoutSeconds"},
       {"readiness_period_seconds", "readinessPeriodSeconds"},
       {"readiness_failure_threshold", "readinessFailureThreshold"}});
  return kNames;
}

Result<core::DeployApp> DeployAppFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  static const std::set<std::string> kFields = {"sandboxId",
                                                "name",
                                                "sourcePath",
                                                "buildCommand",
                                                "buildPath",
                                                "buildTimeoutSeconds",
                                                "startCommand",
                                                "port",
                                                "replicas",
                                                "env",
                                                "readinessPath",
                                                "readinessTimeoutSeconds",
                                                "secrets",
                                                "waitSeconds",
                                                "readinessPeriodSeconds",
                                                "readinessFailureThreshold"};
  for (const auto& [key, _] : body.items())
    if (!kFields.count(key)) return InvalidArgument(key, "unknown field '" + key + "'");
  core::DeployApp req;
  RETURN_IF_ERROR(StringField(body, "sandboxId", req.sandbox_id));
  if (req.sandbox_id.empty()) return InvalidArgument("sandboxId", "sandboxId is required");
  RETURN_IF_ERROR(StringField(body, "name", req.name));
  RETURN_IF_ERROR(StringField(body, "sourcePath", req.source_path));
  RETURN_IF_ERROR(StringField(body, "buildCommand", req.build_command));
  RETURN_IF_ERROR(StringField(body, "buildPath", req.build_path));
  RETURN_IF_ERROR(StringField(body, "startCommand", req.start_command));
  int64_t timeout = req.build_timeout_seconds;
  RETURN_IF_ERROR(IntField(body, "buildTimeoutSeconds", timeout));
  if (timeout < 1 || timeout > 3600)
    return InvalidArgument("buildTimeoutSeconds", "buildTimeoutSeconds must be from 1 to 3600");
  req.build_timeout_seconds = static_cast<int>(timeout);
  if (!body.contains("port")) return InvalidArgument("port", "port is required");
  RETURN_IF_ERROR(IntField(body, "port", req.port));
  RETURN_IF_ERROR(IntField(body, "replicas", req.replicas));
  RETURN_IF_ERROR(StringField(body, "readinessPath", req.readiness_path));
  RETURN_IF_ERROR(IntField(body, "readinessTimeoutSeconds", req.readiness_timeout_seconds));
  RETURN_IF_ERROR(IntField(body, "readinessPeriodSeconds", req.readiness_period_seconds));
  RETURN_IF_ERROR(IntField(body, "readinessFailureThreshold", req.readiness_failure_threshold));
  if (body.contains("env") && !body["env"].is_null()) {
    if (!body["env"].is_object())
      return InvalidArgument("env", "env must be an object of string values");
    for (const auto& [k, v] : body["env"].items()) {
      if (!v.is_string()) return InvalidArgument("env." + k, "env values must be strings");
      req.env[k] = v.get<std::string>();
    }
  }
  if (body.contains("secrets") && !body["secrets"].is_null()) {
    if (!body["secrets"].is_array())
      return InvalidArgument("secrets", "secrets must be an array of secret names");
    for (size_t i = 0; i < body["secrets"].size(); ++i) {
      if (!body["secrets"][i].is_string())
        return InvalidArgument("secrets[" + std::to_string(i) + "]",
                               "secrets must be an array of secret names");
      req.secrets.push_back(body["secrets"][i].get<std::string>());
    }
  }
  return req;
}

Result<int64_t> DeployWaitFromJson(const json& body) {
  int64_t wait = kDefaultDeployWaitSeconds;
  if (body.is_object()) RETURN_IF_ERROR(IntField(body, "waitSeconds", wait));
  if (wait < 0 || wait > 600)
    return InvalidArgument("waitSeconds", "waitSeconds must be from 0 to 600");
  return wait;
}

Result<std::string> RollbackFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, _] : body.items())
    if (key != "releaseId" && key != "waitSeconds")
      return InvalidArgument(key, "unknown field '" + key + "'");
  std::string release;
  RETURN_IF_ERROR(StringField(body, "releaseId", release));
  return release;
}

Result<int64_t> ScaleFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, _] : body.items())
    if (key != "replicas") return InvalidArgument(key, "unknown field '" + key + "'");
  if (!body.contains("replicas") || !body["replicas"].is_number_integer())
    return InvalidArgument("replicas", "replicas must be an integer");
  return body["replicas"].get<int64_t>();
}

json AppReleaseToJson(const core::AppReleaseView& r) {
  return {{"id", r.id},
          {"sha256", r.sha256},
          {"sizeBytes", r.size},
          {"sourcePath", r.source_path},
          {"buildCommand", r.build_command.empty() ? json(nullptr) : json(r.build_command)},
          {"buildPath", r.build_path},
          {"buildExitCode", r.build_exit_code ? json(*r.build_exit_code) : json(nullptr)},
          {"buildOutput", r.build_output},
          {"startCommand", r.start_command},
          {"port", r.port},
          {"readinessPath", r.readiness_path.empty() ? json(nullptr) : json(r.readiness_path)},
          {"readinessTimeoutSeconds", r.readiness_timeout_seconds},
          {"readinessPeriodSeconds", r.readiness_period_seconds},
          {"readinessFailureThreshold", r.readiness_failure_threshold},
          {"secrets", r.secrets},
          {"createdAt", FormatRfc3339(r.created_at_ms)}};
}

json AppReplicaLogToJson(const core::AppReplicaLog& l) {
  return {{"sandboxId", l.sandbox_id},
          {"releaseId", l.release_id},
          {"state", l.state},
          {"stdout", l.stdout_text},
          {"stderr", l.stderr_text},
          {"truncated", l.truncated},
          {"exitCode", l.exit_code ? json(*l.exit_code) : json(nullptr)}};
}

json AppToJson(const core::App& a) {
  json replicas = json::array();
  for (const auto& r : a.replica_list)
    replicas.push_back(
        {{"sandboxId", r.sandbox_id}, {"releaseId", r.release_id}, {"state", r.state}});
  return {{"id", a.id},
          {"name", a.name},
          {"hostname", a.hostname},
          {"url", a.url},
          {"httpUrl", a.http_url},
          {"sourceSandboxId", a.source_sandbox_id},
          {"releaseId", a.release_id},
          {"replicas", a.replicas},
          {"readyReplicas", a.ready_replicas},
          {"status", a.status},
          {"statusMessage", a.status_message.empty() ? json(nullptr) : json(a.status_message)},
          {"restarts", a.restarts},
          {"replicaSandboxes", replicas},
          {"release", a.release ? AppReleaseToJson(*a.release) : json(nullptr)},
          {"createdAt", FormatRfc3339(a.created_at_ms)},
          {"updatedAt", FormatRfc3339(a.updated_at_ms)}};
}

}  // namespace adapt::api
