#include "cli/command_output.h"

#include <chrono>
#include <iostream>
#include <ostream>
#include <thread>

#include "cli/output.h"

namespace adapt::cli {

std::string CommandsPath(const std::string& sandbox_id) {
  return SandboxPath(sandbox_id) + "/commands";
}

std::string CommandPath(const std::string& sandbox_id, const std::string& id) {
  return CommandsPath(sandbox_id) + "/" + EscapeUrlComponent(id);
}

Status FinishCommand(const ApiClient& client, const Console& console, Invocation& invocation,
                     const std::string& sandbox_id, const nlohmann::json& started,
                     const std::string& what) {
  std::string path = CommandPath(sandbox_id, started.value("id", ""));
  nlohmann::json command;
  if (invocation.json) {
    ASSIGN_OR_RETURN(command, WaitDone(client, path));
    console.out << PrettyJson(command);
  } else {
    // Output as it comes; what ran before the stream opened is replayed first.
    ASSIGN_OR_RETURN(command, StreamOutput(client, path, console, true));
    if (command.value("status", "") != "exited")
      std::cerr << "adapt: " << what << " " << command.value("status", "") << "\n";
  }
  invocation.exit_code = ExitCodeOf(command);
  return Status::Ok();
}

int ExitCodeOf(const nlohmann::json& command) {
  if (command["exitCode"].is_number_integer()) return command["exitCode"].get<int>();
  if (command["signal"].is_number_integer()) return 128 + command["signal"].get<int>();
  return 1;
}

namespace {

// Follows the output stream, writing it to `console` when there is one.
Result<nlohmann::json> Follow(const ApiClient& client, const std::string& path,
                              const Console* console) {
  const bool print = console != nullptr;
  std::string event;
  nlohmann::json result;
  auto on_line = [&](std::string_view line) {
    if (line.rfind("event: ", 0) == 0) {
      event = std::string(line.substr(7));
    } else if (line.rfind("data: ", 0) == 0) {
      auto data = nlohmann::json::parse(line.substr(6), nullptr, false);
      if (data.is_discarded()) return true;
      if (event == "result") {
        result = data;
        return false;
      }
      if (print && event == "stdout") console->out << data.value("data", "") << std::flush;
      if (print && event == "stderr") std::cerr << data.value("data", "") << std::flush;
    }
    return true;
  };
  auto response = client.Stream(path + "/stream", on_line);
  if (!response.ok()) return response.status();
  if (response->status >= 400) return JsonOrError(response);
  if (result.is_null()) {
    // The stream broke before the end: the record says where the command stands.
    return JsonOrError(client.Get(path));
  }
  return result;
}

}  // namespace

Result<nlohmann::json> StreamOutput(const ApiClient& client, const std::string& path,
                                    const Console& console, bool print) {
  return Follow(client, path, print ? &console : nullptr);
}

Result<nlohmann::json> WaitDone(const ApiClient& client, const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json command, JsonOrError(client.Get(path)));
  // The output stream ends with the command: no polling. A stream that broke early (adaptd
  // restarting) is opened again after a pause.
  while (command.value("status", "") == "running") {
    ASSIGN_OR_RETURN(command, Follow(client, path, nullptr));
    if (command.value("status", "") == "running")
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return command;
}

}  // namespace adapt::cli
