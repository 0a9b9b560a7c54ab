// adapt user add|ls|rm|passwd: the people who sign in to organizations on the OAuth page
// (admin key; rm also with the organization's own key).
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

struct AddOptions {
  std::string org_id;
  std::string email;
  bool password_stdin = false;
};

void AddAdd(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<AddOptions>();
  CLI::App* add = group.add_subcommand(
      "add", "Add a user to an organization; prints the password adaptd chose, once");
  add->add_option("ORG", options->org_id, "organization id (org_...)")->required();
  add->add_option("EMAIL", options->email, "the user's email address")->required();
  add->add_flag("--password-stdin", options->password_stdin,
                "read the password (10 characters or more) from stdin instead");
  add->callback([options, &invocation] {
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = {{"email", options->email}};
      if (options->password_stdin) {
        std::string password;
        std::getline(console.in, password);
        if (!password.empty() && password.back() == '\r') password.pop_back();
        if (password.empty())
          return InvalidArgument("password", "--password-stdin read no password from stdin");
        body["password"] = password;
      }
      const std::string path = "/v1/orgs/" + EscapeUrlComponent(options->org_id) + "/users";
      ASSIGN_OR_RETURN(nlohmann::json user, JsonOrError(client.Post(path, body)));
      if (invocation.json) {
        console.out << PrettyJson(user);
        return Status::Ok();
      }
      console.out << "added " << user.value("email", "") << " (" << user.value("id", "") << ") to "
                  << user.value("orgId", "") << "\n";
      if (user.contains("password") && user["password"].is_string())
        console.out << "password: " << user["password"].get<std::string>()
                    << "\n(shown once: adaptd keeps only its hash)\n";
      return Status::Ok();
    };
  });
}

void AddUserList(CLI::App& group, Invocation& invocation) {
  auto org_id = std::make_shared<std::string>();
  CLI::App* ls =
      group.add_subcommand("ls", "List users, of every organization or of one, newest first");
  ls->add_option("--org", *org_id, "only this organization's (org_...)");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([org_id, ls_page, &invocation] {
    invocation.run = [org_id, ls_page, &invocation](const ApiClient& client,
                                                    const Console& console) {
      ASSIGN_OR_RETURN(
          nlohmann::json page,
          JsonOrError(client.Get(ListPagePath("/v1/users", *ls_page, {{"orgId", *org_id}}))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& u : page.value("items", nlohmann::json::array()))
        rows.push_back({u.value("id", ""), u.value("email", ""), u.value("orgId", ""),
                        u.value("createdAt", "")});
      console.out << FormatTable({"ID", "EMAIL", "ORG", "CREATED"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });
}

void AddUserRemove(CLI::App& group, Invocation& invocation) {
  auto user_id = std::make_shared<std::string>();
  CLI::App* rm = group.add_subcommand(
      "rm", "Delete a user and end its sign-ins (never an organization's last user)");
  rm->add_option("USER", *user_id, "user id (usr_...)")->required();
  rm->callback([user_id, &invocation] {
    invocation.run = [user_id](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(
          JsonOrError(client.Delete("/v1/users/" + EscapeUrlComponent(*user_id))).status());
      console.out << "deleted user " << *user_id << "\n";
      return Status::Ok();
    };
  });
}

void AddPassword(CLI::App& group, Invocation& invocation) {
  auto user_id = std::make_shared<std::string>();
  CLI::App* passwd = group.add_subcommand(
      "passwd", "Set a user's password, read from stdin, and end its sign-ins (admin key)");
  passwd->add_option("USER", *user_id, "user id (usr_...)")->required();
  passwd->callback([user_id, &invocation] {
    invocation.run = [user_id](const ApiClient& client, const Console& console) {
      std::string password;
      std::getline(console.in, password);
      if (!password.empty() && password.back() == '\r') password.pop_back();
      if (password.empty()) return InvalidArgument("password", "read no password from stdin");
      const std::string path = "/v1/users/" + EscapeUrlComponent(*user_id) + "/password";
      RETURN_IF_ERROR(JsonOrError(client.Put(path, {{"password", password}})).status());
      console.out << "changed the password of " << *user_id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddUserCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group =
      app.add_subcommand("user", "Manage the users who sign in on the OAuth page (admin key)");
  group->require_subcommand(1);
  AddAdd(*group, invocation);
  AddUserList(*group, invocation);
  AddUserRemove(*group, invocation);
  AddPassword(*group, invocation);
}

}  // namespace adapt::cli
