// adapt sandbox checkpoint create | list | delete | restore (named checkpoints); `list` without
// a sandbox id lists the organization's (GET /v1/checkpoints).
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

std::string CheckpointsPath(const std::string& id) { return SandboxPath(id) + "/checkpoints"; }

std::string Text(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string Number(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number()
             ? j[key].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
             : "";
}

struct Args {
  std::string id;
  std::string name;
  bool keep = false;            // create: outlive the sandbox's deletion
  std::string idempotency_key;  // create
};

struct ListArgs {
  std::string id;  // empty: the organization's checkpoints
  bool kept = false;
  std::string limit;
  std::string cursor;
};

CLI::App* WithIdAndName(CLI::App* cmd, Args& args) {
  cmd->add_option("id", args.id, "sandbox id")->required();
  cmd->add_option("name", args.name, "checkpoint name (lower-case letters, digits, '-')")
      ->required();
  return cmd;
}

}  // namespace

void AddSandboxCheckpoints(CLI::App& sandbox_group, Invocation& invocation) {
  CLI::App* group = sandbox_group.add_subcommand(
      "checkpoint", "Named checkpoints of a running durable sandbox: take, list, delete, restore");
  group->require_subcommand(1);

  auto create_args = std::make_shared<Args>();
  CLI::App* create =
      WithIdAndName(group->add_subcommand("create",
                                          "Save the sandbox's processes, memory "
                                          "and files under a name; it keeps running"),
                    *create_args);
  create->add_flag("--keep", create_args->keep,
                   "keep the checkpoint after the sandbox is deleted (until deleted itself)");
  create->add_option("--idempotency-key", create_args->idempotency_key,
                     "retry-safe key (the same key and request: the same checkpoint, not taken "
                     "again)");
  create->callback([create_args, &invocation] {
    invocation.run = [create_args, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(
          nlohmann::json c,
          JsonOrError(client.Post(CheckpointsPath(create_args->id),
                                  {{"name", create_args->name}, {"keep", create_args->keep}},
                                  IdempotencyHeaders(create_args->idempotency_key))));
      if (invocation.json)
        console.out << PrettyJson(c);
      else
        console.out << "checkpoint " << Text(c, "name") << " of " << create_args->id << " ("
                    << Number(c, "sizeBytes") << " bytes, operation " << Text(c, "operationId")
                    << ")\n";
      return Status::Ok();
    };
  });

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = group->add_subcommand(
      "list",
      "List a sandbox's checkpoints, or without ID the organization's, of every sandbox, "
      "deleted ones' kept checkpoints included (newest first)");
  list->alias("ls");
  CLI::Option* id = list->add_option("id", list_args->id, "sandbox id (none: every sandbox's)");
  // A filter of the organization's listing only: a sandbox's list has none.
  list->add_flag("--kept", list_args->kept,
                 "only checkpoints taken with --keep (those that outlive their sandbox)")
      ->excludes(id);
  list->add_option("--limit", list_args->limit, "page size, 1-200 (default 50)");
  list->add_option("--cursor", list_args->cursor, "nextCursor of the previous page");
  list->callback([list_args, &invocation] {
    invocation.run = [list_args, &invocation](const ApiClient& client, const Console& console) {
      const bool organization = list_args->id.empty();
      const std::string path =
          organization
              ? "/v1/checkpoints" + QueryString({{"kept", list_args->kept ? "true" : ""},
                                                 {"limit", list_args->limit},
                                                 {"cursor", list_args->cursor}})
              : CheckpointsPath(list_args->id) +
                    QueryString({{"limit", list_args->limit}, {"cursor", list_args->cursor}});
      ASSIGN_OR_RETURN(nlohmann::json page, JsonOrError(client.Get(path)));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& c : page.value("items", nlohmann::json::array())) {
        if (!organization) {
          rows.push_back({Text(c, "name"), Number(c, "sizeBytes"), Text(c, "createdAt")});
          continue;
        }
        nlohmann::json labels = c.value("sandboxLabels", nlohmann::json::object());
        rows.push_back({Text(c, "sandboxId"), Text(labels, "name"),
                        c.value("sandboxDeleted", false) ? "deleted" : "live", Text(c, "name"),
                        c.value("keep", false) ? "yes" : "no", Number(c, "sizeBytes"),
                        Text(c, "createdAt")});
      }
      if (organization)
        console.out << FormatTable({"SANDBOX", "SANDBOX NAME", "SANDBOX STATE", "NAME", "KEEP",
                                    "BYTES", "CREATED"},
                                   rows)
                    << FormatNextCursor(page);
      else
        console.out << FormatTable({"NAME", "BYTES", "CREATED"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });

  auto delete_args = std::make_shared<Args>();
  WithIdAndName(group->add_subcommand("delete", "Delete a checkpoint"), *delete_args)->alias("rm");
  group->get_subcommand("delete")->callback([delete_args, &invocation] {
    invocation.run = [delete_args](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(JsonOrError(client.Delete(CheckpointsPath(delete_args->id) + "/" +
                                                EscapeUrlComponent(delete_args->name)))
                          .status());
      console.out << "deleted checkpoint " << delete_args->name << " of " << delete_args->id
                  << "\n";
      return Status::Ok();
    };
  });

  auto restore_args = std::make_shared<Args>();
  WithIdAndName(group->add_subcommand("restore",
                                      "Roll the running sandbox back to a checkpoint: its "
                                      "processes, memory and files as they were"),
                *restore_args)
      ->callback([restore_args, &invocation] {
        invocation.run = [restore_args, &invocation](const ApiClient& client,
                                                     const Console& console) {
          ASSIGN_OR_RETURN(
              nlohmann::json sandbox,
              JsonOrError(client.Post(CheckpointsPath(restore_args->id) + "/" +
                                          EscapeUrlComponent(restore_args->name) + "/restore",
                                      nlohmann::json::object())));
          if (invocation.json)
            console.out << PrettyJson(sandbox);
          else
            console.out << "restored " << restore_args->id << " to checkpoint "
                        << restore_args->name << " (" << Text(sandbox, "status") << ", operation "
                        << Text(sandbox, "operationId") << ")\n";
          return Status::Ok();
        };
      });
}

}  // namespace adapt::cli
