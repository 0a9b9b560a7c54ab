#include "core/python_command.h"

namespace adapt::core {
namespace {

// The shell says so on stderr (and exits 127) when the image has no python3.
constexpr char kPythonMissing[] = "adapt: python3 is not installed in this image";
const std::string kPythonScript = std::string("command -v python3 >/dev/null 2>&1 || { echo '") +
                                  kPythonMissing + "' >&2; exit 127; }; exec python3 -";
// As much as a command's stdin may hold.
constexpr size_t kMaxCodeBytes = 8 * 1024 * 1024;

}  // namespace

Result<RunCommandRequest> PythonCommand(const RunPython& req) {
  if (req.code.empty()) return InvalidArgument("code", "code must not be empty");
  if (req.code.size() > kMaxCodeBytes || req.code.find('\0') != std::string::npos)
    return InvalidArgument("code", "code must be at most 8 MiB without NUL characters");
  if (req.timeout_seconds < 1 || req.timeout_seconds > 86400)
    return InvalidArgument("timeout_seconds", "timeout_seconds must be between 1 and 86400");
  if (req.wait_seconds < 0 || req.wait_seconds > 60)
    return InvalidArgument("wait_seconds", "wait_seconds must be between 0 and 60");
  RunCommandRequest command;
  command.argv = {"/bin/sh", "-c", kPythonScript};
  command.stdin_data = req.code;
  command.timeout_seconds = req.timeout_seconds;
  command.wait_seconds = req.wait_seconds;
  return command;
}

bool PythonMissing(const Command& command) {
  return command.argv.size() == 3 && command.argv[2] == kPythonScript && !command.running() &&
         command.exit_code == 127 && command.stderr_text.find(kPythonMissing) != std::string::npos;
}

}  // namespace adapt::core
