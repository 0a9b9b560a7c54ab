// adapt sandbox stop | start | commit
#include <chrono>
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/operation_wait.h"
#include "cli/output.h"
#include "cli/sandbox_wait.h"

namespace adapt::cli {
namespace {

std::string Text(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "hibernated; workspace kept, processes saved"
std::string StoppedSummary(const nlohmann::json& sandbox) {
  std::string out = Text(sandbox, "status");
  const nlohmann::json h =
      sandbox.is_object() ? sandbox.value("hibernation", nlohmann::json()) : nlohmann::json();
  if (h.is_object())
    out += "; workspace " + Text(h, "workspace") + ", processes " + Text(h, "processes");
  return out;
}

void AddStop(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  auto wait = std::make_shared<bool>(false);
  CLI::App* stop = group.add_subcommand(
      "stop",
      "Stop a running sandbox: durable ones are checkpointed, instant ones lose their files");
  stop->add_option("id", *id, "sandbox id")->required();
  stop->add_flag("--wait", *wait,
                 "wait for the checkpoint operation to finish; exit 1 when it failed");
  stop->callback([id, wait, &invocation] {
    invocation.run = [id, wait, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json sandbox, JsonOrError(client.Post(SandboxPath(*id) + "/stop",
                                                                       nlohmann::json::object())));
      nlohmann::json op;
      std::string op_id = Text(sandbox, "operationId");
      if (*wait && !op_id.empty()) {
        ASSIGN_OR_RETURN(op, WaitForOperation(client, op_id, std::chrono::seconds(3600)));
      }
      if (invocation.json) {
        console.out << PrettyJson(
            op.is_null() ? sandbox : nlohmann::json{{"sandbox", sandbox}, {"operation", op}});
      } else {
        console.out << "stopped " << *id << " (" << StoppedSummary(sandbox) << ")\n";
        if (!op.is_null()) console.out << OperationSummary(op) << "\n";
      }
      return op.is_null() ? Status::Ok() : OperationOutcome(op);
    };
  });
}

void AddStart(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  auto wait = std::make_shared<int>(0);
  CLI::App* start = group.add_subcommand("start", "Start a stopped (hibernated) sandbox");
  start->add_option("id", *id, "sandbox id")->required();
  start->add_option("--wait", *wait, "seconds to wait for it to run (default 0: do not wait)")
      ->check(CLI::Range(0, 3600));
  start->callback([id, wait, &invocation] {
    invocation.run = [id, wait, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json sandbox, JsonOrError(client.Post(SandboxPath(*id) + "/start",
                                                                       nlohmann::json::object())));
      ASSIGN_OR_RETURN(sandbox,
                       WaitWhileProvisioning(client, *id, sandbox, std::chrono::seconds(*wait)));
      if (invocation.json) {
        console.out << PrettyJson(sandbox);
      } else {
        console.out << "started " << *id << " (" << Text(sandbox, "status") << ")\n";
      }
      if (*wait > 0 && Text(sandbox, "status") != "running")
        return Status(
            Code::kUnavailable,
            "sandbox " + *id + " is " + Text(sandbox, "status") +
                (Text(sandbox, "error").empty() ? std::string() : ": " + Text(sandbox, "error")));
      return Status::Ok();
    };
  });
}

// adapt sandbox commit ID --name N [--tag T] [--wait]: POST /v1/sandboxes/{id}/image, whose
// operation is the new image's id.
void AddCommit(CLI::App& group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto tag = std::make_shared<std::string>();
  auto wait = std::make_shared<bool>(false);
  auto idempotency_key = std::make_shared<std::string>();
  CLI::App* commit = group.add_subcommand(
      "commit",
      "Save a sandbox's filesystem as an image of the organization (running, or stopped durable)");
  commit->add_option("id", *id, "sandbox id")->required();
  commit->add_option("--name", *name, "the image's name (lower-case letters, digits, '-')")
      ->required();
  commit->add_option("--tag", *tag, "the image's tag (default latest)");
  commit->add_flag("--wait", *wait, "wait for the image to be saved; exit 1 when it failed");
  commit->add_option("--idempotency-key", *idempotency_key,
                     "retry-safe commit key (the same key and request: the same image, not "
                     "saved again)");
  commit->callback([id, name, tag, wait, idempotency_key, &invocation] {
    invocation.run = [id, name, tag, wait, idempotency_key, &invocation](const ApiClient& client,
                                                                         const Console& console) {
      nlohmann::json body = {{"name", *name}};
      if (!tag->empty()) body["tag"] = *tag;
      ASSIGN_OR_RETURN(nlohmann::json image,
                       JsonOrError(client.Post(SandboxPath(*id) + "/image", body,
                                               IdempotencyHeaders(*idempotency_key))));
      nlohmann::json op;
      if (*wait) {
        ASSIGN_OR_RETURN(op,
                         WaitForOperation(client, Text(image, "id"), std::chrono::seconds(3600)));
      }
      if (invocation.json) {
        console.out << PrettyJson(
            op.is_null() ? image : nlohmann::json{{"image", image}, {"operation", op}});
      } else {
        console.out << "saving " << *id << " as image " << Text(image, "id") << " ("
                    << Text(image, "reference") << ")\n";
        if (!op.is_null()) console.out << OperationSummary(op) << "\n";
      }
      return op.is_null() ? Status::Ok() : OperationOutcome(op);
    };
  });
}

}  // namespace

void AddSandboxStopStart(CLI::App& sandbox_group, Invocation& invocation) {
  AddStop(sandbox_group, invocation);
  AddStart(sandbox_group, invocation);
  AddCommit(sandbox_group, invocation);
}

}  // namespace adapt::cli
