// adapt op get ID [--wait SECONDS]
#include <memory>
#include <ostream>
#include <thread>

#include "cli/commands.h"
#include "cli/operation_wait.h"
#include "cli/output.h"

namespace adapt::cli {

using nlohmann::json;

Result<json> WaitForOperation(const ApiClient& client, const std::string& id,
                              std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    ASSIGN_OR_RETURN(json op, JsonOrError(client.Get("/v1/operations/" + EscapeUrlComponent(id))));
    std::string phase = op.value("phase", "");
    if (phase == "Completed" || phase == "Failed" || std::chrono::steady_clock::now() >= deadline)
      return op;
    // adaptd has no event stream for operations; a checkpoint takes seconds.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

std::string OperationSummary(const json& op) {
  std::string out = op.value("id", "") + " " + op.value("kind", "");
  if (op.contains("sandboxId") && op["sandboxId"].is_string())
    out += " of " + op["sandboxId"].get<std::string>();
  out += ": " + op.value("phase", "");
  const json progress = op.value("progress", json::object());
  if (progress.is_object() && progress.value("bytes", 0) > 0)
    out += " (" + std::to_string(progress.value("bytes", 0)) + " bytes)";
  if (op.contains("error") && op["error"].is_string()) out += ": " + op["error"].get<std::string>();
  return out;
}

Status OperationOutcome(const json& op) {
  if (op.value("phase", "") != "Failed") return Status::Ok();
  return Status(Code::kUnavailable, "operation " + op.value("id", "") +
                                        " failed: " + JsonCell(op.value("error", json())));
}

void AddOperationCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("op",
                                       "Long-running operations: checkpoints, restores, "
                                       "image pulls");
  group->require_subcommand(1);
  auto id = std::make_shared<std::string>();
  auto wait = std::make_shared<int>(0);
  CLI::App* get = group->add_subcommand("get", "Show an operation's phase and progress");
  get->add_option("id", *id, "operation id (stop and start print it; an image's id)")->required();
  get->add_option("--wait", *wait,
                  "seconds to wait for it to be Completed or Failed (default 0: do not wait)")
      ->check(CLI::Range(0, 3600));
  get->callback([id, wait, &invocation] {
    invocation.run = [id, wait, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json op, WaitForOperation(client, *id, std::chrono::seconds(*wait)));
      if (invocation.json)
        console.out << PrettyJson(op);
      else
        console.out << OperationSummary(op) << "\n";
      return *wait > 0 ? OperationOutcome(op) : Status::Ok();
    };
  });
}

}  // namespace adapt::cli
