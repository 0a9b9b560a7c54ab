// adapt sandbox cp | sandbox ls: files in a running sandbox. Files travel through
// /files, directories as tar streams through /archive.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/file_transfer.h"
#include "cli/output.h"
#include "cli/sandbox_wait.h"

namespace adapt::cli {
namespace {

namespace fs = std::filesystem;

struct RemotePath {
  std::string sandbox_id;
  std::string path;
};

// "sbx_...:PATH" names a path in a sandbox; anything else is local.
bool ParseRemote(const std::string& arg, RemotePath& out) {
  size_t colon = arg.find(':');
  if (arg.rfind("sbx_", 0) != 0 || colon == std::string::npos) return false;
  out.sandbox_id = arg.substr(0, colon);
  out.path = arg.substr(colon + 1);
  return true;
}

std::string FilesPath(const std::string& sandbox_id, const std::string& resource,
                      const std::vector<std::pair<std::string, std::string>>& query) {
  return SandboxPath(sandbox_id) + "/" + resource + QueryString(query);
}

using FilePtr = std::unique_ptr<FILE, decltype(&std::fclose)>;

Status CheckAnswer(const Result<HttpResponse>& response) {
  if (!response.ok()) return response.status();
  return ErrorFromResponse(*response);
}

Status Upload(const ApiClient& client, const std::string& local, const RemotePath& remote) {
  std::error_code ec;
  auto st = fs::status(local, ec);
  if (ec || !fs::exists(st)) return Status(Code::kInvalidArgument, "no such file: " + local);
  if (fs::is_directory(st)) {
    FilePtr tar(std::tmpfile(), &std::fclose);
    if (!tar) return Internal("cannot create a temporary file");
    RETURN_IF_ERROR(WriteDirectoryTar(local, tar.get()));
    long long size = std::ftell(tar.get());
    std::rewind(tar.get());
    return CheckAnswer(PutStream(client,
                                 FilesPath(remote.sandbox_id, "archive", {{"path", remote.path}}),
                                 tar.get(), size, "application/x-tar"));
  }
  FilePtr in(std::fopen(local.c_str(), "rb"), &std::fclose);
  if (!in) return Status(Code::kInvalidArgument, "cannot read " + local);
  auto size = fs::file_size(local, ec);
  if (ec) return Status(Code::kInvalidArgument, "cannot read " + local + ": " + ec.message());
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.permissions()) & 0777);
  return CheckAnswer(PutStream(
      client, FilesPath(remote.sandbox_id, "files", {{"path", remote.path}, {"mode", mode}}),
      in.get(), static_cast<long long>(size), "application/octet-stream"));
}

Status DownloadFile(const ApiClient& client, const RemotePath& remote, const std::string& local) {
  ASSIGN_OR_RETURN(nlohmann::json info,
                   JsonOrError(client.Get(FilesPath(remote.sandbox_id, "files",
                                                    {{"path", remote.path}, {"stat", "1"}}))));
  std::error_code ec;
  if (info.value("type", "") == "dir") {
    FilePtr tar(std::tmpfile(), &std::fclose);
    if (!tar) return Internal("cannot create a temporary file");
    RETURN_IF_ERROR(CheckAnswer(GetStream(
        client, FilesPath(remote.sandbox_id, "archive", {{"path", remote.path}}), tar.get())));
    std::rewind(tar.get());
    std::vector<std::string> skipped;
    RETURN_IF_ERROR(ExtractTar(tar.get(), local, &skipped));
    if (!skipped.empty()) {
      std::cerr << "adapt: " << skipped.size()
                << " symbolic link(s) pointing outside " + local + " were not made:";
      for (size_t i = 0; i < skipped.size() && i < 10; ++i) std::cerr << " " << skipped[i];
      std::cerr << (skipped.size() > 10 ? " ...\n" : "\n");
    }
    return Status::Ok();
  }
  // Named as the user named the source, never by the server's answer (a path there would
  // send the download anywhere).
  std::string target = local;
  if (fs::is_directory(local, ec)) {
    std::string leaf = fs::path(remote.path).filename().string();
    if (leaf.empty() || leaf == "." || leaf == "..")
      return Status(Code::kInvalidArgument,
                    "name the local file: " + remote.path + " has no file name to copy to");
    target = (fs::path(local) / leaf).string();
  }
  return DownloadToFile(client, FilesPath(remote.sandbox_id, "files", {{"path", remote.path}}),
                        target);
}

struct CpOptions {
  std::string source;
  std::string destination;
};

struct LsOptions {
  std::string sandbox_id;
  std::string path = ".";
};

}  // namespace

void AddSandboxFiles(CLI::App& group, Invocation& invocation) {
  auto cp = std::make_shared<CpOptions>();
  CLI::App* copy = group.add_subcommand(
      "cp",
      "Copy a file or directory into or out of a running sandbox: cp LOCAL ID:PATH or cp "
      "ID:PATH LOCAL");
  copy->add_option("source", cp->source, "LOCAL or ID:PATH")->required();
  copy->add_option("destination", cp->destination, "ID:PATH or LOCAL")->required();
  copy->callback([cp, &invocation] {
    invocation.prepare = [cp](const Console&) -> Status {
      RemotePath r;
      bool from = ParseRemote(cp->source, r), to = ParseRemote(cp->destination, r);
      if (from == to)
        return Status(Code::kInvalidArgument,
                      "exactly one of source and destination must be ID:PATH");
      return Status::Ok();
    };
    invocation.run = [cp](const ApiClient& client, const Console& console) -> Status {
      RemotePath remote;
      const bool upload = ParseRemote(cp->destination, remote);
      if (!upload) ParseRemote(cp->source, remote);
      RETURN_IF_ERROR(AwaitProvisioned(client, remote.sandbox_id));
      if (upload) {
        RETURN_IF_ERROR(Upload(client, cp->source, remote));
      } else {
        RETURN_IF_ERROR(DownloadFile(client, remote, cp->destination));
      }
      console.out << "copied " << cp->source << " to " << cp->destination << "\n";
      return Status::Ok();
    };
  });

  auto ls = std::make_shared<LsOptions>();
  CLI::App* list = group.add_subcommand("ls", "List a directory in a running sandbox");
  list->add_option("id", ls->sandbox_id, "sandbox id")->required();
  list->add_option("path", ls->path, "directory (default: the working directory)");
  list->callback([ls, &invocation] {
    invocation.run = [ls, &invocation](const ApiClient& client, const Console& console) -> Status {
      RETURN_IF_ERROR(AwaitProvisioned(client, ls->sandbox_id));
      ASSIGN_OR_RETURN(nlohmann::json page,
                       JsonOrError(client.Get(FilesPath(ls->sandbox_id, "files",
                                                        {{"path", ls->path}, {"list", "1"}}))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& e : page["items"]) {
        std::string name = JsonCell(e["name"]);
        if (e.value("type", "") == "dir") name += "/";
        if (e.contains("linkTarget")) name += " -> " + JsonCell(e["linkTarget"]);
        rows.push_back({JsonCell(e["type"]), JsonCell(e["mode"]), JsonCell(e["size"]),
                        JsonCell(e["mtime"]), name});
      }
      console.out << FormatTable({"TYPE", "MODE", "SIZE", "MODIFIED", "NAME"}, rows);
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
