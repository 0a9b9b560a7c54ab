// adapt object token create|ls|rm: the storage gateway's tokens (/v1/storage-tokens), so that
// an S3 client (awscli, rclone) can be given credentials without curl.
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

TableRow TokenRow(const nlohmann::json& t) {
  return {JsonCell(t.value("id", nlohmann::json())), JsonCell(t.value("name", nlohmann::json())),
          JsonCell(t.value("expiresAt", nlohmann::json())),
          t.value("revoked", false) ? "revoked" : "active",
          t.contains("sandboxId") ? JsonCell(t["sandboxId"]) : "-"};
}

const std::vector<std::string> kTokenHeader = {"ID", "NAME", "EXPIRES", "STATE", "SANDBOX"};

// The secret is shown once: printed as the environment an S3 client reads, and as the plain
// bearer token for curl. A replay of --idempotency-key has no secret to print.
Status PrintMadeToken(const nlohmann::json& t, std::ostream& out) {
  if (!t.is_object() || !t.contains("secretAccessKey") || !t["secretAccessKey"].is_string()) {
    if (t.is_object() && t.contains("accessKeyId") && t["accessKeyId"].is_string())
      return Status(Code::kConflict, "the idempotency key made storage token " +
                                         t["accessKeyId"].get<std::string>() +
                                         " already, whose secret is shown only once; revoke it "
                                         "and create another with a new key");
    return Internal("adaptd's answer carries no storage token");
  }
  out << "# the secret is shown only now\n"
      << "export AWS_ACCESS_KEY_ID=" << t.value("accessKeyId", std::string()) << "\n"
      << "export AWS_SECRET_ACCESS_KEY=" << t["secretAccessKey"].get<std::string>() << "\n"
      << "export AWS_ENDPOINT_URL=" << t.value("endpoint", std::string()) << "\n"
      << "# bucket: " << t.value("bucket", std::string()) << ", expires "
      << t.value("expiresAt", std::string()) << "\n"
      << "# awscli before 2.13 (Debian 12's) needs the endpoint spelled out:\n"
      << "#   aws --endpoint-url \"$AWS_ENDPOINT_URL\" s3 ls s3://"
      << t.value("bucket", std::string()) << "/\n"
      << "# bearer token: " << t.value("token", std::string()) << "\n";
  return Status::Ok();
}

}  // namespace

void AddStorageTokenCommands(CLI::App& object_group, Invocation& invocation) {
  CLI::App* group = object_group.add_subcommand(
      "token", "Credentials for the S3-compatible storage gateway (create, ls, rm)");
  group->require_subcommand(1);

  struct CreateArgs {
    std::string name;
    int64_t ttl = 0;
    bool ttl_given = false;  // 0 is sent too, for adaptd to refuse
    std::string idempotency_key;
  };
  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = group->add_subcommand(
      "create",
      "Make a storage token and print it as AWS_* variables (shown once): adapt object token "
      "create [--name N] [--ttl S]");
  create->add_option("--name", create_args->name, "a name to recognise it by");
  CLI::Option* ttl = create->add_option("--ttl", create_args->ttl,
                                        "seconds it is valid (1..2592000, default 86400)");
  create->add_option("--idempotency-key", create_args->idempotency_key,
                     "retry-safe creation key (a replay cannot show the secret again)");
  create->callback([create_args, ttl, &invocation] {
    create_args->ttl_given = ttl->count() > 0;
    invocation.run = [create_args, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = nlohmann::json::object();
      if (!create_args->name.empty()) body["name"] = create_args->name;
      if (create_args->ttl_given) body["ttlSeconds"] = create_args->ttl;
      ASSIGN_OR_RETURN(nlohmann::json t,
                       JsonOrError(client.Post("/v1/storage-tokens", body,
                                               IdempotencyHeaders(create_args->idempotency_key))));
      if (invocation.json) {
        console.out << PrettyJson(t);
        return Status::Ok();
      }
      return PrintMadeToken(t, console.out);
    };
  });

  CLI::App* ls = group->add_subcommand(
      "ls", "List storage tokens, newest first (revoked and expired too): adapt object token ls");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json page,
                       JsonOrError(client.Get(ListPagePath("/v1/storage-tokens", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& t : page.value("items", nlohmann::json::array()))
        rows.push_back(TokenRow(t));
      console.out << FormatTable(kTokenHeader, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });

  auto rm_id = std::make_shared<std::string>();
  CLI::App* rm =
      group->add_subcommand("rm", "Revoke a storage token at once: adapt object token rm ID");
  rm->add_option("id", *rm_id, "token id (its access key id)")->required();
  rm->callback([rm_id, &invocation] {
    invocation.run = [rm_id](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(
          JsonOrError(client.Delete("/v1/storage-tokens/" + EscapeUrlComponent(*rm_id))).status());
      console.out << "revoked " << *rm_id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
