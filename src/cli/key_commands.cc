// adapt key create --org ORG_ID [--name NAME]
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

}  // namespace

void AddKeyCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("key", "Manage API keys (admin key)");
  group->require_subcommand(1);
  AddCreate(*group, invocation);
}

}  // namespace adapt::cli
