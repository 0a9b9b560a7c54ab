#include "core/command_request.h"

#include <cctype>
#include <set>

namespace adapt::core {
namespace {

using nlohmann::json;

constexpr size_t kMaxArgvBytes = 128 * 1024;
constexpr size_t kMaxEnvBytes = 32 * 1024;
constexpr size_t kMaxStdinBytes = 8 * 1024 * 1024;

bool ValidEnvName(const std::string& k) {
  if (k.empty() || k.size() > 256 || std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

Result<int> IntField(const json& body, const char* key, int fallback, int lo, int hi) {
  if (!body.contains(key) || body[key].is_null()) return fallback;
  const json& v = body[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    return InvalidArgument(key, std::string(key) + " must be an integer between " +
                                    std::to_string(lo) + " and " + std::to_string(hi));
  return static_cast<int>(v.get<int64_t>());
}

Result<std::string> StringField(const json& body, const char* key, size_t max) {
  if (!body.contains(key) || body[key].is_null()) return std::string();
  if (!body[key].is_string()) return InvalidArgument(key, std::string(key) + " must be a string");
  std::string s = body[key].get<std::string>();
  if (s.size() > max || HasNul(s))
    return InvalidArgument(key, std::string(key) + " must be at most " + std::to_string(max) +
                                    " bytes without NUL characters");
  return s;
}

}  // namespace

Result<RunCommandRequest> ParseRunCommand(const json& body) {
  static const std::set<std::string> kKnown = {"argv",  "command",        "cwd",         "env",
                                               "stdin", "timeoutSeconds", "waitSeconds", "user"};
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, _] : body.items()) {
    if (!kKnown.count(key)) return InvalidArgument(key, "unknown field '" + key + "'");
  }
  RunCommandRequest req;
  bool has_argv = body.contains("argv") && !body["argv"].is_null();
  bool has_command = body.contains("command") && !body["command"].is_null();
  if (has_argv == has_command)
    return InvalidArgument(has_argv ? "command" : "argv",
                           "give exactly one of argv (a program and its arguments) or command "
                           "(a shell command line)");
  if (has_argv) {
    const json& a = body["argv"];
    if (!a.is_array() || a.empty())
      return InvalidArgument("argv", "argv must be a non-empty array of strings");
    size_t bytes = 0;
    for (const auto& v : a) {
      if (!v.is_string() || HasNul(v.get<std::string>()))
        return InvalidArgument("argv", "argv must be an array of strings without NUL characters");
      req.argv.push_back(v.get<std::string>());
      bytes += req.argv.back().size() + 1;
    }
    if (req.argv[0].empty()) return InvalidArgument("argv", "argv[0] must not be empty");
    if (bytes > kMaxArgvBytes) return InvalidArgument("argv", "argv must be at most 128 KiB");
  } else {
    ASSIGN_OR_RETURN(std::string command, StringField(body, "command", kMaxArgvBytes));
    if (command.empty() && !body["command"].is_string())
      return InvalidArgument("command", "command must be a string");
    if (command.empty()) return InvalidArgument("command", "command must not be empty");
    req.argv = {"/bin/sh", "-c", command};
  }
  ASSIGN_OR_RETURN(req.cwd, StringField(body, "cwd", 4096));
  if (!req.cwd.empty() && req.cwd[0] != '/')
    return InvalidArgument("cwd", "cwd must be an absolute path");
  ASSIGN_OR_RETURN(req.stdin_data, StringField(body, "stdin", kMaxStdinBytes));
  ASSIGN_OR_RETURN(req.user, StringField(body, "user", 256));
  ASSIGN_OR_RETURN(req.timeout_seconds, IntField(body, "timeoutSeconds", 600, 1, 86400));
  ASSIGN_OR_RETURN(req.wait_seconds, IntField(body, "waitSeconds", 10, 0, 60));
  if (body.contains("env") && !body["env"].is_null()) {
    const json& e = body["env"];
    if (!e.is_object()) return InvalidArgument("env", "env must be an object of strings");
    size_t bytes = 0;
    for (const auto& [k, v] : e.items()) {
      if (!ValidEnvName(k))
        return InvalidArgument("env", "env name '" + k + "' must match [A-Za-z_][A-Za-z0-9_]*");
      if (!v.is_string() || HasNul(v.get<std::string>()))
        return InvalidArgument("env", "env." + k + " must be a string without NUL characters");
      req.env[k] = v.get<std::string>();
      bytes += k.size() + req.env[k].size() + 2;
    }
    if (bytes > kMaxEnvBytes) return InvalidArgument("env", "env must be at most 32 KiB");
  }
  return req;
}

}  // namespace adapt::core
