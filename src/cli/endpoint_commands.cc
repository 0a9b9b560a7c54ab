// adapt sandbox expose | endpoint ls | endpoint rm
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

std::string EndpointsPath(const std::string& sandbox_id) {
  return "/v1/sandboxes/" + EscapeUrlComponent(sandbox_id) + "/endpoints";
}

TableRow Row(const nlohmann::json& e) {
  return {JsonCell(e.value("id", nlohmann::json())), JsonCell(e.value("port", nlohmann::json())),
          JsonCell(e.value("url", nlohmann::json())),
          JsonCell(e.value("httpUrl", nlohmann::json()))};
}

}  // namespace

void AddSandboxExpose(CLI::App& group, Invocation& invocation) {
  struct Args {
    std::string sandbox_id;
    int port = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* expose = group.add_subcommand(
      "expose", "Give a sandbox port a public HTTP(S) endpoint: adapt sandbox expose ID PORT");
  expose->add_option("id", args->sandbox_id, "sandbox id")->required();
  expose->add_option("port", args->port, "port inside the sandbox")->required();
  expose->callback([args, &invocation] {
    invocation.run = [args, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json e, JsonOrError(client.Post(EndpointsPath(args->sandbox_id),
                                                                 {{"port", args->port}})));
      if (invocation.json) {
        console.out << PrettyJson(e);
      } else {
        console.out << FormatTable({"ID", "PORT", "URL", "HTTP URL"}, {Row(e)});
      }
      return Status::Ok();
    };
  });
}

void AddEndpointCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("endpoint", "List and remove sandbox endpoints");
  group->require_subcommand(1);
  auto sandbox_id = std::make_shared<std::string>();
  CLI::App* ls = group->add_subcommand("ls", "List a sandbox's endpoints: adapt endpoint ls ID");
  ls->add_option("sandbox_id", *sandbox_id, "sandbox id")->required();
  ls->callback([sandbox_id, &invocation] {
    invocation.run = [sandbox_id, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json page, JsonOrError(client.Get(EndpointsPath(*sandbox_id))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& e : page["items"]) rows.push_back(Row(e));
      console.out << FormatTable({"ID", "PORT", "URL", "HTTP URL"}, rows);
      return Status::Ok();
    };
  });
  struct Ids {
    std::string sandbox_id, id;
  };
  auto ids = std::make_shared<Ids>();
  CLI::App* rm =
      group->add_subcommand("rm", "Remove an endpoint: adapt endpoint rm SANDBOX_ID ENDPOINT_ID");
  rm->add_option("sandbox_id", ids->sandbox_id, "sandbox id")->required();
  rm->add_option("endpoint_id", ids->id, "endpoint id")->required();
  rm->callback([ids, &invocation] {
    invocation.run = [ids](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(JsonOrError(client.Delete(EndpointsPath(ids->sandbox_id) + "/" +
                                                EscapeUrlComponent(ids->id)))
                          .status());
      console.out << "removed " << ids->id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
