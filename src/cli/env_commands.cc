// adapt env ls: the ready-made environments (seed 000) and whether this host has each.
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {

void AddEnvCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("env", "List the ready-made environments");
  group->require_subcommand(1);
  CLI::App* ls = group->add_subcommand(
      "ls", "List the environment aliases (use one as --image) and the image sources accepted");
  ls->callback([&invocation] {
    invocation.run = [&invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json body, JsonOrError(client.Get("/v1/environments")));
      if (invocation.json) {
        console.out << PrettyJson(body);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& e : body.value("environments", nlohmann::json::array())) {
        bool available = e.value("available", false);
        rows.push_back({JsonCell(e.value("alias", nlohmann::json())), available ? "yes" : "no",
                        JsonCell(e.value("image", nlohmann::json())),
                        available ? JsonCell(e.value("description", nlohmann::json()))
                                  : JsonCell(e.value("reason", nlohmann::json()))});
      }
      console.out << FormatTable({"ALIAS", "AVAILABLE", "IMAGE", "DESCRIPTION"}, rows);
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
