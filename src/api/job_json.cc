#include "api/job_json.h"

#include <set>

#include "api/request_parsing.h"
#include "api/sandbox_json.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

const std::set<std::string> kSandboxFields = {"image", "cpu",     "memoryMiB", "diskMiB",
                                              "env",   "secrets", "network"};
const std::set<std::string> kCommandFields = {"command", "argv", "cwd", "timeoutSeconds",
                                              "maxAttempts"};

json OptionalIntJson(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

json TimeOrNull(int64_t millis) { return millis ? json(FormatRfc3339(millis)) : json(nullptr); }

}  // namespace

const core::FieldNames& RestJobFields() {
  static const core::FieldNames kNames({{"memory_mib", "memoryMiB"},
                                        {"disk_mib", "diskMiB"},
                                        {"timeout_seconds", "timeoutSeconds"},
                                        {"ttl_seconds", "timeoutSeconds"},
                                        {"max_attempts", "maxAttempts"},
                                        {"idempotency_key", "Idempotency-Key"}});
  return kNames;
}

Result<core::SubmitJob> SubmitJobFromJson(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  json sandbox = json::object();
  for (const auto& [key, value] : body.items()) {
    if (kSandboxFields.count(key)) {
      sandbox[key] = value;
    } else if (!kCommandFields.count(key)) {
      return InvalidArgument(key, "unknown field '" + key + "'");
    }
  }
  core::SubmitJob req;
  ASSIGN_OR_RETURN(req.sandbox, CreateSandboxFromJson(sandbox));
  ASSIGN_OR_RETURN(req.argv, CommandArgvFromJson(body));
  if (body.contains("cwd") && !body["cwd"].is_null()) {
    if (!body["cwd"].is_string()) return InvalidArgument("cwd", "cwd must be a string");
    req.cwd = body["cwd"].get<std::string>();
  }
  ASSIGN_OR_RETURN(req.timeout_seconds, OptionalIntField(body, "timeoutSeconds"));
  ASSIGN_OR_RETURN(req.max_attempts, OptionalIntField(body, "maxAttempts"));
  return req;
}

json JobToJson(const core::Job& j) {
  json env = json::array();
  for (const auto& [name, _] : j.spec.env) env.push_back(name);
  return {{"id", j.id},
          {"status", j.status},
          {"image", j.spec.image},
          {"cpu", j.spec.cpu},
          {"memoryMiB", j.spec.memory_mib},
          {"diskMiB", j.spec.disk_mib},
          {"envNames", env},
          {"secrets", j.spec.secrets},
          {"egress", j.spec.egress},
          {"argv", j.spec.argv},
          {"cwd", j.spec.cwd.empty() ? json(nullptr) : json(j.spec.cwd)},
          {"timeoutSeconds", j.spec.timeout_seconds},
          {"maxAttempts", j.max_attempts},
          {"attempts", j.attempts},
          {"lastRunId", j.last_run_id.empty() ? json(nullptr) : json(j.last_run_id)},
          {"exitCode", OptionalIntJson(j.exit_code)},
          {"error", j.error.empty() ? json(nullptr) : json(j.error)},
          {"createdAt", FormatRfc3339(j.created_at)},
          {"updatedAt", FormatRfc3339(j.updated_at)},
          {"finishedAt", TimeOrNull(j.finished_at)}};
}

json JobPageToJson(const core::JobPage& page) {
  json items = json::array();
  for (const auto& j : page.items) items.push_back(JobToJson(j));
  return {{"items", items},
          {"nextCursor", page.next_cursor ? json(*page.next_cursor) : json(nullptr)}};
}

json RunToJson(const core::Run& r) {
  auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"id", r.id},
          {"jobId", or_null(r.job_id)},
          {"automationId", or_null(r.automation_id)},
          {"trigger", r.trigger},
          {"attempt", r.attempt},
          {"status", r.status},
          {"sandboxId", or_null(r.sandbox_id)},
          {"commandId", or_null(r.command_id)},
          {"exitCode", OptionalIntJson(r.exit_code)},
          {"error", or_null(r.error)},
          {"stdout", r.stdout_text},
          {"stderr", r.stderr_text},
          {"stdoutTruncated", r.stdout_truncated},
          {"stderrTruncated", r.stderr_truncated},
          {"scheduledAt", TimeOrNull(r.scheduled_at)},
          {"startedAt", TimeOrNull(r.started_at)},
          {"endedAt", TimeOrNull(r.ended_at)},
          {"createdAt", FormatRfc3339(r.created_at)},
          {"usage", r.usage ? json{{"cpuMilliseconds", r.usage->cpu_millis},
                                   {"memoryMiBMilliseconds", r.usage->memory_mib_millis},
                                   {"gpuMilliseconds", r.usage->gpu_millis},
                                   {"amountNanos", r.usage->amount_nanos},
                                   {"entries", r.usage->entries}}
                            : json(nullptr)}};
}

json RunPageToJson(const core::RunPage& page) {
  json items = json::array();
  for (const auto& r : page.items) items.push_back(RunToJson(r));
  return {{"items", items},
          {"nextCursor", page.next_cursor ? json(*page.next_cursor) : json(nullptr)}};
}

}  // namespace adapt::api
