// adapt sandbox expose | endpoint ls [SANDBOX_ID] | endpoint rm SANDBOX_ID (ENDPOINT_ID | --port N)
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

std::string EndpointsPath(const std::string& sandbox_id) {
  return SandboxPath(sandbox_id) + "/endpoints";
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
    std::string idempotency_key;
  };
  auto args = std::make_shared<Args>();
  CLI::App* expose = group.add_subcommand(
      "expose", "Give a sandbox port a public HTTP(S) endpoint: adapt sandbox expose ID PORT");
  expose->add_option("id", args->sandbox_id, "sandbox id")->required();
  expose->add_option("port", args->port, "port inside the sandbox")->required();
  expose->add_option("--idempotency-key", args->idempotency_key,
                     "retry-safe creation key (the same key and request: the same endpoint)");
  expose->callback([args, &invocation] {
    invocation.run = [args, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(
          nlohmann::json e,
          JsonOrError(client.Post(EndpointsPath(args->sandbox_id), {{"port", args->port}},
                                  IdempotencyHeaders(args->idempotency_key))));
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
  CLI::App* ls = group->add_subcommand(
      "ls", "List a sandbox's endpoints, or every endpoint, newest first: adapt endpoint ls [ID]");
  ls->add_option("sandbox_id", *sandbox_id, "sandbox id (none: every sandbox's)");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([sandbox_id, ls_page, &invocation] {
    invocation.run = [sandbox_id, ls_page, &invocation](const ApiClient& client,
                                                        const Console& console) {
      const std::string path = sandbox_id->empty() ? "/v1/endpoints" : EndpointsPath(*sandbox_id);
      ASSIGN_OR_RETURN(nlohmann::json page, JsonOrError(client.Get(ListPagePath(path, *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& e : page.value("items", nlohmann::json::array())) rows.push_back(Row(e));
      console.out << FormatTable({"ID", "PORT", "URL", "HTTP URL"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });
  struct Ids {
    std::string sandbox_id, id;
    int port = 0;
  };
  auto ids = std::make_shared<Ids>();
  CLI::App* rm = group->add_subcommand(
      "rm",
      "Remove an endpoint, or every endpoint to a port: adapt endpoint rm SANDBOX_ID "
      "(ENDPOINT_ID | --port PORT)");
  rm->add_option("sandbox_id", ids->sandbox_id, "sandbox id")->required();
  CLI::Option* id = rm->add_option("endpoint_id", ids->id, "endpoint id");
  CLI::Option* port = rm->add_option("--port", ids->port, "every endpoint to this port");
  id->excludes(port);
  port->excludes(id);
  rm->callback([ids, port, &invocation] {
    const bool by_port = port->count() > 0;
    invocation.run = [ids, by_port, &invocation](const ApiClient& client,
                                                 const Console& console) -> Status {
      if (!by_port && ids->id.empty())
        return InvalidArgument("endpoint_id", "name an ENDPOINT_ID or --port PORT");
      if (by_port) {
        ASSIGN_OR_RETURN(nlohmann::json body,
                         JsonOrError(client.Delete(EndpointsPath(ids->sandbox_id) +
                                                   "?port=" + std::to_string(ids->port))));
        if (invocation.json) {
          console.out << PrettyJson(body);
          return Status::Ok();
        }
        for (const auto& removed : body["removed"])
          console.out << "removed " << removed.get<std::string>() << "\n";
        return Status::Ok();
      }
      RETURN_IF_ERROR(JsonOrError(client.Delete(EndpointsPath(ids->sandbox_id) + "/" +
                                                EscapeUrlComponent(ids->id)))
                          .status());
      console.out << "removed " << ids->id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
