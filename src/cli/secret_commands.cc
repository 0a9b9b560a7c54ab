// adapt secret set|ls|rm: the organization's secrets. Values go to adaptd and never come back.
#include <istream>
#include <iterator>
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

struct SetOptions {
  std::string name;
  std::string value;
  bool has_value = false;
  std::string idempotency_key;
};

// The value from --value, else all of stdin less one trailing newline (so that
// `echo "$TOKEN" | adapt secret set NAME` stores the token itself).
std::string ValueOf(const SetOptions& o, std::istream& in) {
  if (o.has_value) return o.value;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

void AddSet(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<SetOptions>();
  CLI::App* set = group.add_subcommand(
      "set", "Create a secret or store its next version: adapt secret set NAME < value-file");
  set->add_option("NAME", options->name, "secret name (the sandbox variable it becomes)")
      ->required();
  auto* value = set->add_option("--value", options->value,
                                "the value (default: read from stdin; --value shows in ps)");
  set->add_option("--idempotency-key", options->idempotency_key,
                  "retry-safe key (the same key and request store one version)");
  set->callback([options, value, &invocation] {
    options->has_value = value->count() > 0;
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      json body = {{"name", options->name}, {"value", ValueOf(*options, console.in)}};
      ASSIGN_OR_RETURN(json secret,
                       JsonOrError(client.Post("/v1/secrets", body,
                                               IdempotencyHeaders(options->idempotency_key))));
      if (invocation.json) {
        console.out << PrettyJson(secret);
        return Status::Ok();
      }
      console.out << JsonCell(secret.value("name", json())) << " version "
                  << JsonCell(secret.value("version", json())) << "\n";
      return Status::Ok();
    };
  });
}

void AddSecretList(CLI::App& group, Invocation& invocation) {
  CLI::App* ls =
      group.add_subcommand("ls", "List the organization's secrets, newest first (never values)");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(json page, JsonOrError(client.Get(ListPagePath("/v1/secrets", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& s : page.value("items", json::array()))
        rows.push_back({JsonCell(s.value("name", json())), JsonCell(s.value("version", json())),
                        JsonCell(s.value("updatedAt", json()))});
      console.out << FormatTable({"NAME", "VERSION", "UPDATED"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddSecretRemove(CLI::App& group, Invocation& invocation) {
  auto name = std::make_shared<std::string>();
  CLI::App* rm = group.add_subcommand(
      "rm", "Delete a secret (sandboxes made with it keep the value they captured)");
  rm->add_option("NAME", *name, "secret name")->required();
  rm->callback([name, &invocation] {
    invocation.run = [name](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(
          JsonOrError(client.Delete("/v1/secrets/" + EscapeUrlComponent(*name))).status());
      console.out << "deleted " << *name << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddSecretCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("secret", "Manage organization secrets");
  group->require_subcommand(1);
  AddSet(*group, invocation);
  AddSecretList(*group, invocation);
  AddSecretRemove(*group, invocation);
}

}  // namespace adapt::cli
