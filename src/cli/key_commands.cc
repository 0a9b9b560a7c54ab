// adapt key create|ls|rm: API keys of an organization.
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

struct KeyOptions {
  std::string org_id;
  std::string name;
};

void AddCreate(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<KeyOptions>();
  CLI::App* create = group.add_subcommand("create", "Create an API key for an organization");
  create->add_option("--org", options->org_id, "organization id (org_...)")->required();
  create->add_option("--name", options->name, "a name to recognise the key by");
  create->callback([options, &invocation] {
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = nlohmann::json::object();
      if (!options->name.empty()) body["name"] = options->name;
      const std::string path = "/v1/orgs/" + EscapeUrlComponent(options->org_id) + "/keys";
      ASSIGN_OR_RETURN(nlohmann::json key, JsonOrError(client.Post(path, body)));
      if (invocation.json) {
        console.out << PrettyJson(key);
        return Status::Ok();
      }
      // Only the key text, so `KEY=$(adapt key create --org ...)` captures it; adaptd never
      // shows it again.
      const bool has_key = key.is_object() && key.contains("key") && key["key"].is_string();
      if (!has_key) return Internal("adaptd's answer carries no key");
      console.out << key["key"].get<std::string>() << "\n";
      return Status::Ok();
    };
  });
}

void AddList(CLI::App& group, Invocation& invocation) {
  auto org_id = std::make_shared<std::string>();
  CLI::App* ls = group.add_subcommand("ls", "List an organization's API keys (never their text)");
  ls->add_option("--org", *org_id, "organization id (org_...)")->required();
  ls->callback([org_id, &invocation] {
    invocation.run = [org_id, &invocation](const ApiClient& client, const Console& console) {
      const std::string path = "/v1/orgs/" + EscapeUrlComponent(*org_id) + "/keys";
      ASSIGN_OR_RETURN(nlohmann::json page, JsonOrError(client.Get(path)));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& k : page.value("items", nlohmann::json::array()))
        rows.push_back({k.value("id", ""), k.value("name", ""),
                        k.value("admin", false) ? "yes" : "", k.value("createdAt", "")});
      console.out << FormatTable({"ID", "NAME", "ADMIN", "CREATED"}, rows);
      return Status::Ok();
    };
  });
}

void AddRemove(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<KeyOptions>();
  auto key_id = std::make_shared<std::string>();
  CLI::App* rm = group.add_subcommand(
      "rm", "Delete an API key; OAuth tokens issued with it stop working at once");
  rm->add_option("--org", options->org_id, "organization id (org_...)")->required();
  rm->add_option("KEY_ID", *key_id, "key id (key_...)")->required();
  rm->callback([options, key_id, &invocation] {
    invocation.run = [options, key_id](const ApiClient& client, const Console& console) {
      const std::string path = "/v1/orgs/" + EscapeUrlComponent(options->org_id) + "/keys/" +
                               EscapeUrlComponent(*key_id);
      RETURN_IF_ERROR(JsonOrError(client.Delete(path)).status());
      console.out << "deleted " << *key_id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddKeyCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("key", "Manage API keys (admin key)");
  group->require_subcommand(1);
  AddCreate(*group, invocation);
  AddList(*group, invocation);
  AddRemove(*group, invocation);
}

}  // namespace adapt::cli
