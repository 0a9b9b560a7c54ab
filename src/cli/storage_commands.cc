// adapt storage create | ls | get | rm: persistent storage (/v1/storage).
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/file_transfer.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

TableRow Row(const nlohmann::json& v) {
  std::string users;
  for (const auto& a : v.value("attachments", nlohmann::json::array()))
    users += (users.empty() ? "" : ",") + a.value("sandboxId", std::string());
  return {JsonCell(v.value("name", nlohmann::json())),
          JsonCell(v.value("sizeMiB", nlohmann::json())),
          JsonCell(v.value("usedBytes", nlohmann::json())),
          JsonCell(v.value("status", nlohmann::json())), users.empty() ? "-" : users};
}

const std::vector<std::string> kHeader = {"NAME", "SIZE MIB", "USED BYTES", "STATUS", "SANDBOXES"};

}  // namespace

void AddStorageCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("storage", "Create, list and delete persistent storage");
  group->require_subcommand(1);

  struct CreateArgs {
    std::string name;
    int64_t size_mib = 0;
    std::string idempotency_key;
  };
  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = group->add_subcommand(
      "create", "Create encrypted persistent storage: adapt storage create NAME [--size MIB]");
  create->add_option("name", create_args->name, "storage name")->required();
  create->add_option("--size", create_args->size_mib, "size in MiB (64..131072, default 2048)");
  create->add_option("--idempotency-key", create_args->idempotency_key,
                     "retry-safe creation key (the same key and request: the same storage)");
  create->callback([create_args, &invocation] {
    invocation.run = [create_args, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = {{"name", create_args->name}};
      if (create_args->size_mib) body["sizeMiB"] = create_args->size_mib;
      ASSIGN_OR_RETURN(nlohmann::json v,
                       JsonOrError(client.Post("/v1/storage", body,
                                               IdempotencyHeaders(create_args->idempotency_key))));
      if (invocation.json) {
        console.out << PrettyJson(v);
      } else {
        console.out << FormatTable(kHeader, {Row(v)});
      }
      return Status::Ok();
    };
  });

  CLI::App* ls =
      group->add_subcommand("ls", "List persistent storage, newest first: adapt storage ls");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json page,
                       JsonOrError(client.Get(ListPagePath("/v1/storage", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& v : page.value("items", nlohmann::json::array())) rows.push_back(Row(v));
      console.out << FormatTable(kHeader, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });

  struct GetArgs {
    std::string name, path, local;
  };
  auto get_args = std::make_shared<GetArgs>();
  CLI::App* get = group->add_subcommand(
      "get",
      "Copy a file of persistent storage to a local file, whether or not a sandbox mounts it: "
      "adapt storage get NAME PATH LOCAL (PATH relative to /workspace or under it)");
  get->add_option("name", get_args->name, "storage name")->required();
  get->add_option("path", get_args->path, "file path, relative to /workspace or under it")
      ->required();
  get->add_option("local", get_args->local, "local file to write")->required();
  get->callback([get_args, &invocation] {
    invocation.run = [get_args](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(DownloadToFile(client,
                                     "/v1/storage/" + EscapeUrlComponent(get_args->name) +
                                         "/files?path=" + EscapeUrlComponent(get_args->path),
                                     get_args->local));
      console.out << "copied " << get_args->name << ":" << get_args->path << " to "
                  << get_args->local << "\n";
      return Status::Ok();
    };
  });

  struct RmArgs {
    std::string name, confirm;
  };
  auto rm_args = std::make_shared<RmArgs>();
  CLI::App* rm = group->add_subcommand(
      "rm", "Delete persistent storage and its files: adapt storage rm NAME --confirm NAME");
  rm->add_option("name", rm_args->name, "storage name")->required();
  rm->add_option("--confirm", rm_args->confirm, "the storage's name again, to confirm");
  rm->callback([rm_args, &invocation] {
    invocation.run = [rm_args](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(JsonOrError(client.Delete("/v1/storage/" + EscapeUrlComponent(rm_args->name) +
                                                "?confirm=" + EscapeUrlComponent(rm_args->confirm)))
                          .status());
      console.out << "deleted " << rm_args->name << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
