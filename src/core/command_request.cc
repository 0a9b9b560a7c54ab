#include "core/command_request.h"

#include <cctype>

#include "base/text.h"

namespace adapt::core {
namespace {

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

}  // namespace

Status ValidateRunCommand(const RunCommandRequest& req) {
  if (req.argv.empty() || req.argv[0].empty())
    return InvalidArgument("argv", "argv must name a program");
  size_t bytes = 0;
  for (const auto& a : req.argv) {
    if (HasNul(a)) return InvalidArgument("argv", "argv must not hold NUL characters");
    bytes += a.size() + 1;
  }
  if (bytes > kMaxArgvBytes) return InvalidArgument("argv", "argv must be at most 128 KiB");
  if (!req.cwd.empty() && (req.cwd[0] != '/' || req.cwd.size() > 4096 || HasNul(req.cwd)))
    return InvalidArgument("cwd", "cwd must be an absolute path of at most 4096 bytes");
  if (req.stdin_data.size() > kMaxStdinBytes || HasNul(req.stdin_data))
    return InvalidArgument("stdin", "stdin must be at most 8 MiB without NUL characters");
  if (req.user.size() > 256 || HasNul(req.user))
    return InvalidArgument("user", "user must be at most 256 bytes");
  if (req.timeout_seconds < 1 || req.timeout_seconds > 86400)
    return InvalidArgument("timeout_seconds", "timeout_seconds must be between 1 and 86400");
  if (req.wait_seconds < 0 || req.wait_seconds > 60)
    return InvalidArgument("wait_seconds", "wait_seconds must be between 0 and 60");
  size_t env_bytes = 0;
  for (const auto& [k, v] : req.env) {
    if (!ValidEnvName(k))
      return InvalidArgument("env", "env name '" + k + "' must match [A-Za-z_][A-Za-z0-9_]*");
    if (HasNul(v)) return InvalidArgument("env", "env." + k + " must not hold NUL characters");
    env_bytes += k.size() + v.size() + 2;
  }
  if (env_bytes > kMaxEnvBytes) return InvalidArgument("env", "env must be at most 32 KiB");
  return Status::Ok();
}

}  // namespace adapt::core
