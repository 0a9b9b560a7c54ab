// adapt key create|ls|rm: API keys of the caller's own organization (/v1/keys), or with --org
// of any organization (/v1/orgs/{id}/keys: the admin key).
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

struct KeyOptions {
  std::string org_id;
  std::string name;
  int64_t ttl_seconds = 0;
  bool has_ttl = false;
  std::string idempotency_key;
};

// The caller's own organization's keys, or with --org one organization's (the admin key).
std::string KeysPath(const std::string& org_id) {
  if (org_id.empty()) return "/v1/keys";
  return "/v1/orgs/" + EscapeUrlComponent(org_id) + "/keys";
}

void AddKeyCreate(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<KeyOptions>();
  CLI::App* create = group.add_subcommand(
      "create", "Create an API key for your organization (or --org's); prints it once");
  create->add_option("--org", options->org_id, "organization id (org_...): the admin key only");
  create->add_option("--name", options->name, "a name to recognise the key by");
  CLI::Option* ttl =
      create->add_option("--ttl", options->ttl_seconds, "seconds until it expires [never]");
  create->add_option("--idempotency-key", options->idempotency_key,
                     "retry-safe creation key (a replay answers the key's record without the key)");
  create->callback([options, ttl, &invocation] {
    options->has_ttl = ttl->count() > 0;
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = nlohmann::json::object();
      if (!options->name.empty()) body["name"] = options->name;
      if (options->has_ttl) body["ttlSeconds"] = options->ttl_seconds;
      ASSIGN_OR_RETURN(nlohmann::json key,
                       JsonOrError(client.Post(KeysPath(options->org_id), body,
                                               IdempotencyHeaders(options->idempotency_key))));
      if (invocation.json) {
        console.out << PrettyJson(key);
        return Status::Ok();
      }
      // Only the key text, so `KEY=$(adapt key create)` captures it; adaptd never
      // shows it again.
      const bool has_key = key.is_object() && key.contains("key") && key["key"].is_string();
      // A replay of --idempotency-key: the text was shown once, to the first request.
      if (!has_key && !options->idempotency_key.empty() && key.is_object() && key.contains("id") &&
          key["id"].is_string())
        return Status(Code::kConflict, "the idempotency key made API key " +
                                           key["id"].get<std::string>() +
                                           " already, whose text is shown only once; revoke it "
                                           "and create another with a new key");
      if (!has_key) return Internal("adaptd's answer carries no key");
      console.out << key["key"].get<std::string>() << "\n";
      return Status::Ok();
    };
  });
}

void AddKeyList(CLI::App& group, Invocation& invocation) {
  auto org_id = std::make_shared<std::string>();
  CLI::App* ls = group.add_subcommand(
      "ls", "List your organization's API keys, or --org's, newest first (never their text)");
  ls->add_option("--org", *org_id, "organization id (org_...)");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([org_id, ls_page, &invocation] {
    invocation.run = [org_id, ls_page, &invocation](const ApiClient& client,
                                                    const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json page,
                       JsonOrError(client.Get(ListPagePath(KeysPath(*org_id), *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& k : page.value("items", nlohmann::json::array()))
        rows.push_back({k.value("id", ""), k.value("name", ""),
                        k.value("admin", false) ? "yes" : "", k.value("createdAt", ""),
                        k.contains("expiresAt") && k["expiresAt"].is_string()
                            ? k["expiresAt"].get<std::string>()
                            : "never"});
      console.out << FormatTable({"ID", "NAME", "ADMIN", "CREATED", "EXPIRES"}, rows)
                  << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddKeyRemove(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<KeyOptions>();
  auto key_id = std::make_shared<std::string>();
  CLI::App* rm = group.add_subcommand(
      "rm", "Revoke an API key; it and OAuth tokens issued with it stop working at once");
  rm->add_option("--org", options->org_id, "organization id (org_...)");
  rm->add_option("KEY_ID", *key_id, "key id (key_...)")->required();
  rm->callback([options, key_id, &invocation] {
    invocation.run = [options, key_id](const ApiClient& client, const Console& console) {
      const std::string path = KeysPath(options->org_id) + "/" + EscapeUrlComponent(*key_id);
      RETURN_IF_ERROR(JsonOrError(client.Delete(path)).status());
      console.out << "deleted " << *key_id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddKeyCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand(
      "key", "Manage your organization's API keys (--org: any organization's, admin key)");
  group->require_subcommand(1);
  AddKeyCreate(*group, invocation);
  AddKeyList(*group, invocation);
  AddKeyRemove(*group, invocation);
}

}  // namespace adapt::cli
