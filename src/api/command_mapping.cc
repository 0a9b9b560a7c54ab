#include "api/command_mapping.h"

#include <set>
#include <string>

#include "api/request_parsing.h"
#include "base/time.h"

namespace adapt::api {

namespace {

using nlohmann::json;

Result<int> RestInt(const json& body, const char* key, int fallback, int lo, int hi) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
    return InvalidArgument(key, std::string(key) + " must be an integer between " +
                                    std::to_string(lo) + " and " + std::to_string(hi));
  return static_cast<int>(it->get<int64_t>());
}

json RestTextOrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json RestIntOrNull(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

Result<core::RunPython> ParseRunPython(const json& body) {
  static const std::set<std::string> kKnown = {"code", "timeoutSeconds", "waitSeconds"};
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, _] : body.items())
    if (!kKnown.count(key)) return InvalidArgument(key, "unknown field '" + key + "'");
  core::RunPython req;
  auto code = body.find("code");
  if (code == body.end() || !code->is_string())
    return InvalidArgument("code", "code must be a string: the Python program to run");
  req.code = code->get<std::string>();
  ASSIGN_OR_RETURN(req.timeout_seconds,
                   RestInt(body, "timeoutSeconds", req.timeout_seconds, 1, 86400));
  ASSIGN_OR_RETURN(req.wait_seconds, RestInt(body, "waitSeconds", req.wait_seconds, 0, 60));
  return req;
}

Result<core::RunCommandRequest> ParseRunCommand(const json& body) {
  static const std::set<std::string> kKnown = {"argv",  "command",        "cwd",         "env",
                                               "stdin", "timeoutSeconds", "waitSeconds", "user"};
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, _] : body.items()) {
    if (!kKnown.count(key)) return InvalidArgument(key, "unknown field '" + key + "'");
  }
  core::RunCommandRequest req;
  ASSIGN_OR_RETURN(req.argv, CommandArgvFromJson(body));
  ASSIGN_OR_RETURN(req.cwd, OptionalStringField(body, "cwd"));
  ASSIGN_OR_RETURN(req.stdin_data, OptionalStringField(body, "stdin"));
  ASSIGN_OR_RETURN(req.user, OptionalStringField(body, "user"));
  ASSIGN_OR_RETURN(req.timeout_seconds, RestInt(body, "timeoutSeconds", 600, 1, 86400));
  ASSIGN_OR_RETURN(req.wait_seconds, RestInt(body, "waitSeconds", 10, 0, 60));
  if (body.contains("env") && !body["env"].is_null()) {
    const json& e = body["env"];
    if (!e.is_object()) return InvalidArgument("env", "env must be an object of strings");
    for (const auto& [k, v] : e.items()) {
      if (!v.is_string()) return InvalidArgument("env", "env." + k + " must be a string");
      req.env[k] = v.get<std::string>();
    }
  }
  // What the values may be (sizes, paths, names) is the core's to say, in the same words.
  RETURN_IF_ERROR(core::ValidateRunCommand(req));
  return req;
}

json CommandToJson(const core::Command& c) {
  return {{"id", c.id},
          {"sandboxId", c.sandbox_id},
          {"status", c.status},
          {"argv", c.argv},
          {"cwd", RestTextOrNull(c.cwd)},
          {"user", RestTextOrNull(c.user)},
          {"timeoutSeconds", c.timeout_seconds},
          {"exitCode", RestIntOrNull(c.exit_code)},
          {"signal", RestIntOrNull(c.signal)},
          {"stdout", c.stdout_text},
          {"stderr", c.stderr_text},
          {"truncated", c.truncated},
          {"startedAt", FormatRfc3339(c.started_at)},
          {"finishedAt", c.finished_at ? json(FormatRfc3339(*c.finished_at)) : json(nullptr)},
          {"terminationReason", RestTextOrNull(c.termination_reason)},
          {"error", RestTextOrNull(c.error)},
          {"servedBy", c.served_by}};
}

json CommandPageToJson(const core::CommandPage& page) {
  json items = json::array();
  for (const auto& c : page.items) items.push_back(CommandToJson(c));
  return {{"items", items},
          {"nextCursor", page.next_cursor ? json(*page.next_cursor) : json(nullptr)}};
}

}  // namespace adapt::api
