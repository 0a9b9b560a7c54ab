// adapt gpu ls: the GPU types new GPU sandboxes can have (seed 000's list_gpu_types).
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {

void AddGpuCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("gpu", "List the GPU types sandboxes can have");
  group->require_subcommand(1);
  CLI::App* ls = group->add_subcommand(
      "ls", "List GPU models and memory sizes available for new GPU sandboxes");
  ls->callback([&invocation] {
    invocation.run = [&invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json body, JsonOrError(client.Get("/v1/gpu-types")));
      if (invocation.json) {
        console.out << PrettyJson(body);
        return Status::Ok();
      }
      const nlohmann::json items = body.value("items", nlohmann::json::array());
      if (items.empty()) {
        console.out << JsonCell(body.value("explanation", nlohmann::json())) << "\n";
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& t : items)
        rows.push_back({JsonCell(t.value("type", nlohmann::json())),
                        JsonCell(t.value("memoryGiB", nlohmann::json()))});
      console.out << FormatTable({"TYPE", "MEMORY GIB"}, rows);
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
