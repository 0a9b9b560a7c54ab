#include "api/command_mapping.h"

#include <set>
#include <string>

namespace adapt::api {
namespace {

using nlohmann::json;

Result<int> RunPythonInt(const json& body, const char* key, int fallback, int lo, int hi) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
    return InvalidArgument(key, std::string(key) + " must be an integer between " +
                                    std::to_string(lo) + " and " + std::to_string(hi));
  return static_cast<int>(it->get<int64_t>());
}

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
                   RunPythonInt(body, "timeoutSeconds", req.timeout_seconds, 1, 86400));
  ASSIGN_OR_RETURN(req.wait_seconds, RunPythonInt(body, "waitSeconds", req.wait_seconds, 0, 60));
  return req;
}

}  // namespace adapt::api
