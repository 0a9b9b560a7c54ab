// adapt object artifacts|save|attach: a sandbox's artifacts (objects under
// artifacts/<sandbox id>/), copying a workspace file into object storage with a download link,
// and attaching object storage to a sandbox. The same verbs as MCP's artifact tools.
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/list_page_options.h"
#include "cli/output.h"
#include "cli/sandbox_wait.h"

namespace adapt::cli {
namespace {

std::string ArtifactsPath(const std::string& sandbox_id) {
  return SandboxPath(sandbox_id) + "/artifacts";
}

}  // namespace

void AddArtifactCommands(CLI::App& group, Invocation& invocation) {
  auto list_id = std::make_shared<std::string>();
  CLI::App* artifacts = group.add_subcommand(
      "artifacts", "List a sandbox's artifacts in key order: adapt object artifacts SANDBOX_ID");
  artifacts->add_option("sandbox_id", *list_id, "sandbox id")->required();
  auto list_page = AddListPageOptions(*artifacts);
  artifacts->callback([list_id, list_page, &invocation] {
    invocation.run = [list_id, list_page, &invocation](const ApiClient& client,
                                                       const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json page,
                       JsonOrError(client.Get(ListPagePath(ArtifactsPath(*list_id), *list_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& o : page.value("items", nlohmann::json::array()))
        rows.push_back({JsonCell(o.value("key", nlohmann::json())),
                        JsonCell(o.value("size", nlohmann::json())),
                        JsonCell(o.value("lastModified", nlohmann::json()))});
      console.out << FormatTable({"KEY", "SIZE", "LAST MODIFIED"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });

  struct SaveArgs {
    std::string sandbox_id, path, key;
    int64_t ttl = 3600;
  };
  auto save_args = std::make_shared<SaveArgs>();
  CLI::App* save = group.add_subcommand(
      "save",
      "Copy a workspace file into object storage and print a download link: adapt object save "
      "SANDBOX_ID PATH [--key KEY] [--ttl S]");
  save->add_option("sandbox_id", save_args->sandbox_id, "sandbox id")->required();
  save->add_option("path", save_args->path, "relative to /workspace, or under /workspace")
      ->required();
  save->add_option("--key", save_args->key, "object key [artifacts/SANDBOX_ID/FILE NAME]");
  save->add_option("--ttl", save_args->ttl, "seconds the link is valid [3600]");
  save->callback([save_args, &invocation] {
    invocation.run = [save_args, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = {{"path", save_args->path}, {"ttlSeconds", save_args->ttl}};
      if (!save_args->key.empty()) body["key"] = save_args->key;
      ASSIGN_OR_RETURN(nlohmann::json saved,
                       JsonOrError(client.Post(ArtifactsPath(save_args->sandbox_id), body)));
      if (invocation.json)
        console.out << PrettyJson(saved);
      else
        console.out << "saved " << saved.value("key", "") << "\n" << saved.value("url", "") << "\n";
      return Status::Ok();
    };
  });

  struct AttachArgs {
    std::string sandbox_id;
    int64_t ttl = 24 * 3600;
    int wait = 0;
  };
  auto attach_args = std::make_shared<AttachArgs>();
  CLI::App* attach = group.add_subcommand(
      "attach",
      "Give a sandbox a storage token and the gateway's address (SANDBOX_STORAGE_ENDPOINT, "
      "SANDBOX_STORAGE_TOKEN): adapt object attach SANDBOX_ID [--ttl S]");
  attach->add_option("sandbox_id", attach_args->sandbox_id, "sandbox id")->required();
  attach->add_option("--ttl", attach_args->ttl, "seconds the token is valid [86400]");
  attach
      ->add_option("--wait", attach_args->wait,
                   "seconds to wait for a restarted sandbox to run again (default 0: do not "
                   "wait; exec, cp and ls wait by themselves)")
      ->check(CLI::Range(0, 3600));
  attach->callback([attach_args, &invocation] {
    invocation.run = [attach_args, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(
          nlohmann::json attached,
          JsonOrError(client.Post(SandboxPath(attach_args->sandbox_id) + "/object-storage",
                                  {{"ttlSeconds", attach_args->ttl}})));
      if (invocation.json) {
        console.out << PrettyJson(attached);
      } else {
        console.out << "attached object storage to " << attach_args->sandbox_id << " at "
                    << attached.value("endpoint", "") << " (token " << attached.value("tokenId", "")
                    << ", until " << attached.value("expiresAt", "")
                    << (attached.value("restarted", false) ? "; restarted" : "") << ")\n";
      }
      // The sandbox boots again after the answer, as after `adapt sandbox start`'s.
      if (attach_args->wait == 0 || !attached.value("restarted", false)) return Status::Ok();
      const std::string& id = attach_args->sandbox_id;
      ASSIGN_OR_RETURN(nlohmann::json sandbox,
                       WaitWhileProvisioning(client, id, {{"status", "provisioning"}},
                                             std::chrono::seconds(attach_args->wait)));
      if (SandboxStatus(sandbox) == "running") return Status::Ok();
      return Status(Code::kUnavailable, "sandbox " + id + " is " + SandboxStatus(sandbox) +
                                            " after the restart for object storage");
    };
  });
}

}  // namespace adapt::cli
