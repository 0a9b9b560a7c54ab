// adapt image pull | import | ls | get | rm
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>
#include <thread>

#include "cli/commands.h"
#include "cli/file_transfer.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

using nlohmann::json;

std::string ImagePath(const std::string& id) { return "/v1/images/" + EscapeUrlComponent(id); }

std::string Mib(const json& bytes) {
  if (!bytes.is_number()) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes.get<double>() / (1 << 20));
  return buf;
}

TableRow Row(const json& i) {
  return {JsonCell(i.value("id", json())),     JsonCell(i.value("reference", json())),
          JsonCell(i.value("source", json())), JsonCell(i.value("status", json())),
          Mib(i.value("size", json())),        JsonCell(i.value("digest", json()))};
}
const TableRow kHeader = {"ID", "REFERENCE", "SOURCE", "STATUS", "SIZE", "DIGEST"};

void PrintImage(const json& image, bool as_json, const Console& console) {
  if (as_json) {
    console.out << PrettyJson(image);
    return;
  }
  std::vector<std::pair<std::string, std::string>> fields = {
      {"id", JsonCell(image.value("id", json()))},
      {"reference", JsonCell(image.value("reference", json()))},
      {"source", JsonCell(image.value("source", json()))},
      {"status", JsonCell(image.value("status", json()))},
      {"digest", JsonCell(image.value("digest", json()))},
      {"platform", JsonCell(image.value("platform", json()))},
      {"size", Mib(image.value("size", json()))},
      {"error", JsonCell(image.value("error", json()))},
      {"created", JsonCell(image.value("createdAt", json()))}};
  if (image.contains("sandboxes") && image["sandboxes"].is_array()) {
    std::string users;
    for (const auto& s : image["sandboxes"]) users += (users.empty() ? "" : ", ") + JsonCell(s);
    fields.push_back({"sandboxes", users});
  }
  if (image.contains("config") && image["config"].is_object() && !image["config"].empty())
    fields.push_back(
        {"config", image["config"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  console.out << FormatFields(fields);
}

// "[=====>    ]  12.0 MiB / 40.0 MiB" on one terminal line, redrawn in place.
void DrawProgress(const json& progress) {
  double done = progress.value("bytes", 0.0), total = progress.value("totalBytes", 0.0);
  constexpr int kWidth = 30;
  int filled = total > 0 ? static_cast<int>(kWidth * done / total) : 0;
  std::string bar(static_cast<size_t>(std::min(filled, kWidth)), '=');
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r[%s] %7.1f / %.1f MiB", bar.c_str(), done / (1 << 20), total / (1 << 20));
  std::fflush(stderr);
}

Status Pull(const ApiClient& client, const std::string& reference, const std::string& username,
            bool password_stdin, const std::string& password_secret, bool detach, bool as_json,
            const HeaderList& headers, const Console& console) {
  json body = {{"reference", reference}};
  if (!username.empty() && !password_secret.empty()) {
    body["credentials"] = {{"username", username}, {"passwordSecret", password_secret}};
  } else if (!username.empty()) {
    std::string password;
    if (password_stdin) std::getline(console.in, password);
    body["credentials"] = {{"username", username}, {"password", password}};
  }
  ASSIGN_OR_RETURN(json image, JsonOrError(client.Post("/v1/images", body, headers)));
  if (detach) {
    PrintImage(image, as_json, console);
    return Status::Ok();
  }
  const bool bar = isatty(STDERR_FILENO) && !as_json;
  const std::string id = image.value("id", "");
  while (true) {
    ASSIGN_OR_RETURN(json op, JsonOrError(client.Get("/v1/operations/" + EscapeUrlComponent(id))));
    if (bar) DrawProgress(op.value("progress", json::object()));
    std::string phase = op.value("phase", "");
    if (phase == "Completed" || phase == "Failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (bar) std::fputs("\n", stderr);
  ASSIGN_OR_RETURN(image, JsonOrError(client.Get(ImagePath(id))));
  PrintImage(image, as_json, console);
  if (image.value("status", "") == "failed")
    return Status(Code::kUnavailable,
                  "pulling " + reference + " failed: " + JsonCell(image.value("error", json())));
  return Status::Ok();
}

Status Import(const ApiClient& client, const std::string& file, const std::string& name,
              bool as_json, const HeaderList& headers, const Console& console) {
  std::error_code ec;
  auto size = std::filesystem::file_size(file, ec);
  if (ec) return Status(Code::kInvalidArgument, "cannot read " + file + ": " + ec.message());
  std::unique_ptr<FILE, decltype(&std::fclose)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) return Status(Code::kInvalidArgument, "cannot read " + file);
  ASSIGN_OR_RETURN(
      json image,
      JsonOrError(PostStream(client, "/v1/images/import" + QueryString({{"name", name}}), in.get(),
                             static_cast<long long>(size), "application/x-tar", headers)));
  PrintImage(image, as_json, console);
  return Status::Ok();
}

}  // namespace

void AddImageCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("image", "Pull, import, list and remove images");
  group->require_subcommand(1);

  struct PullArgs {
    std::string reference, username, password_secret, idempotency_key;
    bool password_stdin = false, detach = false;
  };
  auto pull_args = std::make_shared<PullArgs>();
  CLI::App* pull = group->add_subcommand(
      "pull", "Pull an image from an OCI registry: adapt image pull REFERENCE");
  pull->add_option("reference", pull_args->reference, "image reference, e.g. registry/app:1")
      ->required();
  pull->add_option("--username", pull_args->username, "registry user (private registries)");
  pull->add_flag("--password-stdin", pull_args->password_stdin,
                 "read the registry password from the first line of standard input");
  pull->add_option("--password-secret", pull_args->password_secret,
                   "the organization secret holding the registry password (adapt secret set)");
  pull->add_flag("--detach", pull_args->detach, "return at once instead of waiting for the pull");
  pull->add_option("--idempotency-key", pull_args->idempotency_key,
                   "retry-safe pull key (the same key and request: the same image, not pulled "
                   "again)");
  pull->callback([pull_args, &invocation] {
    invocation.prepare = [pull_args](const Console&) {
      if (pull_args->password_stdin && pull_args->username.empty())
        return Status(Code::kInvalidArgument, "--password-stdin needs --username",
                      "--password-stdin");
      if (!pull_args->password_secret.empty() &&
          (pull_args->username.empty() || pull_args->password_stdin))
        return Status(Code::kInvalidArgument,
                      "--password-secret needs --username and no --password-stdin",
                      "--password-secret");
      return Status::Ok();
    };
    invocation.run = [pull_args, &invocation](const ApiClient& client, const Console& console) {
      return Pull(client, pull_args->reference, pull_args->username, pull_args->password_stdin,
                  pull_args->password_secret, pull_args->detach, invocation.json,
                  IdempotencyHeaders(pull_args->idempotency_key), console);
    };
  });

  struct ImportArgs {
    std::string file, name, idempotency_key;
  };
  auto import_args = std::make_shared<ImportArgs>();
  CLI::App* import = group->add_subcommand(
      "import",
      "Import a private image from an OCI archive or a docker save archive: adapt image import "
      "FILE.tar");
  import->add_option("file", import_args->file, "the archive (tar, tar.gz or tar.zst)")->required();
  import->add_option("--name", import_args->name,
                     "the image to take from an archive holding several (its tag)");
  import->add_option("--idempotency-key", import_args->idempotency_key,
                     "retry-safe import key (the same key, name and archive: the same image)");
  import->callback([import_args, &invocation] {
    invocation.run = [import_args, &invocation](const ApiClient& client, const Console& console) {
      return Import(client, import_args->file, import_args->name, invocation.json,
                    IdempotencyHeaders(import_args->idempotency_key), console);
};
}  // namespace adapt::cli
);

CLI::App* ls = group->add_subcommand("ls", "List the organization's images, newest first");
auto ls_page = AddListPageOptions(*ls);
ls->callback([ls_page, &invocation] {
  invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
    ASSIGN_OR_RETURN(json list, JsonOrError(client.Get(ListPagePath("/v1/images", *ls_page))));
    if (invocation.json) {
      console.out << PrettyJson(list);
      return Status::Ok();
    }
    std::vector<TableRow> rows;
    for (const auto& i : list.value("items", json::array())) rows.push_back(Row(i));
    console.out << FormatTable(kHeader, rows) << FormatNextCursor(list);
    return Status::Ok();
  };
});

auto id = std::make_shared<std::string>();
CLI::App* get = group->add_subcommand("get", "Show an image: adapt image get IMAGE_ID");
get->add_option("id", *id, "image id (img_...)")->required();
get->callback([id, &invocation] {
  invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
    ASSIGN_OR_RETURN(json image, JsonOrError(client.Get(ImagePath(*id))));
    PrintImage(image, invocation.json, console);
    return Status::Ok();
  };
});

auto rm_id = std::make_shared<std::string>();
CLI::App* rm = group->add_subcommand("rm", "Delete an image: adapt image rm IMAGE_ID");
rm->add_option("id", *rm_id, "image id (img_...)")->required();
rm->callback([rm_id, &invocation] {
  invocation.run = [rm_id](const ApiClient& client, const Console& console) {
    RETURN_IF_ERROR(JsonOrError(client.Delete(ImagePath(*rm_id))).status());
    console.out << "removed " << *rm_id << "\n";
    return Status::Ok();
  };
});
}

}  // namespace adapt::cli
