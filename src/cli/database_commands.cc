// adapt db status|create|rotate|dump|delete: the organization's PostgreSQL database. No command
// prints its host or password; sandboxes created with --database (REST "database": true) get those.
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

Status Print(const json& db, const Invocation& invocation, const Console& console) {
  if (invocation.json) {
    console.out << PrettyJson(db);
    return Status::Ok();
  }
  std::vector<TableRow> rows = {{"status", JsonCell(db.value("status", json()))},
                                {"postgres", JsonCell(db.value("postgresVersion", json()))},
                                {"size", JsonCell(db.value("sizeBytes", json())) + " of " +
                                             JsonCell(db.value("quotaBytes", json())) + " bytes"},
                                {"connections", JsonCell(db.value("connections", json())) + " of " +
                                                    JsonCell(db.value("connectionLimit", json()))},
                                {"created", JsonCell(db.value("createdAt", json()))}};
  console.out << FormatTable({"FIELD", "VALUE"}, rows);
  return Status::Ok();
}

void AddVerb(CLI::App& group, Invocation& invocation, const char* name, const char* help,
             const char* method, const char* path) {
  CLI::App* verb = group.add_subcommand(name, help);
  verb->callback([&invocation, method, path] {
    invocation.run = [&invocation, method, path](const ApiClient& client, const Console& console) {
      auto reply =
          std::string(method) == "GET" ? client.Get(path) : client.Post(path, json::object());
      ASSIGN_OR_RETURN(json db, JsonOrError(std::move(reply)));
      return Print(db, invocation, console);
    };
  });
}

void AddDump(CLI::App& group, Invocation& invocation) {
  CLI::App* verb = group.add_subcommand(
      "dump", "Write a pg_dump archive (-Fc) of the database into the organization's objects");
  verb->callback([&invocation] {
    invocation.run = [&invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json dump, JsonOrError(client.Post("/v1/database/dump", json::object())));
      if (invocation.json) {
        console.out << PrettyJson(dump);
        return Status::Ok();
      }
      console.out << "dumped to " << dump.value("bucket", "") << "/" << dump.value("key", "")
                  << " (" << JsonCell(dump.value("sizeBytes", json())) << " bytes)\n";
      return Status::Ok();
    };
  });
}

void AddDelete(CLI::App& group, Invocation& invocation) {
  auto confirm = std::make_shared<std::string>();
  CLI::App* verb = group.add_subcommand(
      "delete", "Delete the database and its data: adapt db delete --confirm ORG_ID");
  verb->add_option("--confirm", *confirm, "the organization's id, to confirm");
  verb->callback([&invocation, confirm] {
    invocation.run = [confirm](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(
          JsonOrError(client.Delete("/v1/database?confirm=" + EscapeUrlComponent(*confirm)))
              .status());
      console.out << "deleted the organization's database\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddDatabaseCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("db", "The organization's PostgreSQL database");
  group->require_subcommand(1);
  AddVerb(*group, invocation, "status",
          "Status, PostgreSQL version, size and connections (never credentials)", "GET",
          "/v1/database");
  AddVerb(*group, invocation, "create", "Make the organization's database (idempotent)", "POST",
          "/v1/database");
  AddVerb(*group, invocation, "rotate",
          "Give the database a new password (sandboxes created later get it)", "POST",
          "/v1/database/rotate");
  AddDump(*group, invocation);
  AddDelete(*group, invocation);
}

}  // namespace adapt::cli
