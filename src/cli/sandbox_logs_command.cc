// adapt sandbox logs ID: a sandbox's startup output as it is produced, to the end of its startup
// (GET /v1/sandboxes/{id}/startup/stream); stdout to stdout, stderr to stderr. The exit status
// is the startup command's when it exited; --json prints the final sandbox record instead.
#include <iostream>
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {

void AddSandboxLogs(CLI::App& sandbox_group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  CLI::App* logs = sandbox_group.add_subcommand(
      "logs", "Follow a sandbox's startup output as it is produced, until its startup ends");
  logs->add_option("id", *id, "sandbox id")->required();
  logs->callback([id, &invocation] {
    invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
      const bool print = !invocation.json;
      std::string event;
      nlohmann::json result;
      auto on_line = [&](std::string_view line) {
        if (line.rfind("event: ", 0) == 0) {
          event = std::string(line.substr(7));
        } else if (line.rfind("data: ", 0) == 0) {
          auto data = nlohmann::json::parse(line.substr(6), nullptr, false);
          if (!data.is_object()) return true;
          if (event == "result") {
            result = std::move(data);
            return false;
          }
          if (!print) return true;
          if (event == "stdout") console.out << data.value("data", "") << std::flush;
          if (event == "stderr") std::cerr << data.value("data", "") << std::flush;
          if (event == "reset") {
            std::cerr << "adapt: older output was dropped (the latest 256 KiB are kept); "
                         "all that is kept follows\n";
            console.out << data.value("stdout", "") << std::flush;
            std::cerr << data.value("stderr", "") << std::flush;
          }
        }
        return true;
      };
      std::string path = SandboxPath(*id);
      auto response = client.Stream(path + "/startup/stream", on_line);
      if (!response.ok()) return response.status();
      if (response->status >= 400) return JsonOrError(response).status();
      // The stream broke before its end: the record says where the sandbox stands.
      if (result.is_null()) {
        ASSIGN_OR_RETURN(result, JsonOrError(client.Get(path)));
      }
      if (invocation.json) console.out << PrettyJson(result);
      const nlohmann::json startup = result.value("startup", nlohmann::json::object());
      if (startup.is_object() && startup.contains("exitCode") &&
          startup["exitCode"].is_number_integer())
        invocation.exit_code = startup["exitCode"].get<int>();
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
