// adapt org create | list | delete  (admin key only; adaptd answers 403 to other keys)
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

std::string DescribeOrg(const nlohmann::json& org) {
  auto cell = [&org](const char* name) {
    return org.is_object() && org.contains(name) ? JsonCell(org[name]) : std::string();
  };
  return FormatFields({{"id", cell("id")},
                       {"name", cell("name")},
                       {"status", cell("status")},
                       {"createdAt", cell("createdAt")}});
}

void AddOrgCreate(CLI::App& group, Invocation& invocation) {
  auto name = std::make_shared<std::string>();
  CLI::App* create = group.add_subcommand("create", "Create an organization (a tenant)");
  create->add_option("name", *name, "organization name")->required();
  create->callback([name, &invocation] {
    invocation.run = [name, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json org, JsonOrError(client.Post("/v1/orgs", {{"name", *name}})));
      console.out << (invocation.json ? PrettyJson(org) : DescribeOrg(org));
      return Status::Ok();
    };
  });
}

struct OrgListOptions {
  std::string limit;
  std::string cursor;
};

void AddOrgList(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<OrgListOptions>();
  CLI::App* list = group.add_subcommand("list", "List organizations");
  list->add_option("--limit", options->limit, "page size, 1-200 (default 50)");
  list->add_option("--cursor", options->cursor, "nextCursor of the previous page");
  list->callback([options, &invocation] {
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      const std::string path =
          "/v1/orgs" + QueryString({{"limit", options->limit}, {"cursor", options->cursor}});
      ASSIGN_OR_RETURN(nlohmann::json page, JsonOrError(client.Get(path)));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      if (page.contains("items") && page["items"].is_array()) {
        for (const nlohmann::json& org : page["items"]) {
          if (!org.is_object()) continue;
          rows.push_back({JsonCell(org.value("id", nlohmann::json())),
                          JsonCell(org.value("name", nlohmann::json())),
                          JsonCell(org.value("status", nlohmann::json())),
                          JsonCell(org.value("createdAt", nlohmann::json()))});
        }
      }
      console.out << FormatTable({"ID", "NAME", "STATUS", "CREATED"}, rows)
                  << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

struct OrgDeleteArgs {
  std::string id, confirm;
};

// Refused while the organization has sandboxes that are not deleted (seed 001), apps,
// automations or unfinished jobs; everything else it holds goes with it.
void AddOrgDelete(CLI::App& group, Invocation& invocation) {
  auto args = std::make_shared<OrgDeleteArgs>();
  CLI::App* del = group.add_subcommand(
      "delete", "Delete an organization and all it holds: adapt org delete ID --confirm NAME");
  del->add_option("id", args->id, "organization id")->required();
  del->add_option("--confirm", args->confirm, "the organization's name, to confirm");
  del->callback([args, &invocation] {
    invocation.run = [args](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(JsonOrError(client.Delete("/v1/orgs/" + EscapeUrlComponent(args->id) +
                                                "?confirm=" + EscapeUrlComponent(args->confirm)))
                          .status());
      console.out << "deleted organization " << args->id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddOrgCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("org", "Manage organizations (admin key)");
  group->require_subcommand(1);
  AddOrgCreate(*group, invocation);
  AddOrgList(*group, invocation);
  AddOrgDelete(*group, invocation);
}

}  // namespace adapt::cli
