// adapt object ls|get|put|rm|url and adapt site publish|ls|rm: object storage and static
// sites. Object bodies stream through /v1/objects/content without being held in memory.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/file_transfer.h"
#include "cli/list_page_options.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

namespace fs = std::filesystem;
using FilePtr = std::unique_ptr<FILE, decltype(&std::fclose)>;

std::string ContentPath(const std::string& key) {
  return "/v1/objects/content" + QueryString({{"key", key}});
}

Status CheckAnswer(const Result<HttpResponse>& response) {
  if (!response.ok()) return response.status();
  return ErrorFromResponse(*response);
}

TableRow ObjectRow(const nlohmann::json& o) {
  return {JsonCell(o.value("key", nlohmann::json())), JsonCell(o.value("size", nlohmann::json())),
          JsonCell(o.value("contentType", nlohmann::json())),
          JsonCell(o.value("lastModified", nlohmann::json()))};
}

TableRow SiteRow(const nlohmann::json& s) {
  return {JsonCell(s.value("id", nlohmann::json())), JsonCell(s.value("name", nlohmann::json())),
          JsonCell(s.value("releaseId", nlohmann::json())),
          JsonCell(s.value("url", nlohmann::json()))};
}

void AddObjectLs(CLI::App& group, Invocation& invocation) {
  struct Args {
    std::string prefix;
    bool recursive = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* ls = group.add_subcommand(
      "ls",
      "List objects in key order: adapt object ls [PREFIX] [-r] (every page unless "
      "--limit or --cursor asks for one)");
  ls->add_option("prefix", args->prefix, "key prefix");
  ls->add_flag("-r,--recursive", args->recursive, "list every key, not one level");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([args, ls_page, &invocation] {
    invocation.run = [args, ls_page, &invocation](const ApiClient& client, const Console& console) {
      std::vector<std::pair<std::string, std::string>> q = {{"prefix", args->prefix}};
      if (!args->recursive) q.emplace_back("delimiter", "/");
      const bool one_page = !ls_page->limit.empty() || !ls_page->cursor.empty();
      nlohmann::json all = {{"items", nlohmann::json::array()},
                            {"commonPrefixes", nlohmann::json::array()},
                            {"nextCursor", nullptr}};
      ListPageOptions page_options = *ls_page;
      if (page_options.limit.empty()) page_options.limit = "200";
      for (;;) {
        ASSIGN_OR_RETURN(nlohmann::json page,
                         JsonOrError(client.Get(ListPagePath("/v1/objects", page_options, q))));
        for (auto& o : page.value("items", nlohmann::json::array())) all["items"].push_back(o);
        for (auto& p : page.value("commonPrefixes", nlohmann::json::array()))
          all["commonPrefixes"].push_back(p);
        if (page.contains("usage")) all["usage"] = page["usage"];
        all["nextCursor"] = page.value("nextCursor", nlohmann::json());
        if (one_page || !all["nextCursor"].is_string()) break;
        page_options.cursor = all["nextCursor"].get<std::string>();
      }
      if (invocation.json) {
        console.out << PrettyJson(all);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& p : all["commonPrefixes"])
        rows.push_back({p.get<std::string>(), "", "DIR", ""});
      for (const auto& o : all["items"]) rows.push_back(ObjectRow(o));
      console.out << FormatTable({"KEY", "SIZE", "TYPE", "MODIFIED"}, rows)
                  << FormatNextCursor(all);
      return Status::Ok();
    };
  });
}

void AddObjectTransfer(CLI::App& group, Invocation& invocation) {
  struct Args {
    std::string first, second, content_type;
    int ttl = 3600;
  };
  auto put_args = std::make_shared<Args>();
  CLI::App* put = group.add_subcommand("put", "Upload a file: adapt object put LOCAL KEY");
  put->add_option("local", put_args->first, "local file ('-' is not supported)")->required();
  put->add_option("key", put_args->second, "object key")->required();
  put->add_option("--content-type", put_args->content_type, "Content-Type to store");
  put->callback([put_args, &invocation] {
    invocation.run = [put_args, &invocation](const ApiClient& client, const Console& console) {
      std::error_code ec;
      auto size = fs::file_size(put_args->first, ec);
      if (ec) return Status(Code::kInvalidArgument, "cannot read " + put_args->first);
      FilePtr in(std::fopen(put_args->first.c_str(), "rb"), &std::fclose);
      if (!in) return Status(Code::kInvalidArgument, "cannot read " + put_args->first);
      auto answer = PutStream(
          client, ContentPath(put_args->second), in.get(), static_cast<long long>(size),
          put_args->content_type.empty() ? "application/octet-stream" : put_args->content_type);
      ASSIGN_OR_RETURN(nlohmann::json o, JsonOrError(answer));
      if (invocation.json)
        console.out << PrettyJson(o);
      else
        console.out << "uploaded " << o.value("key", "") << " (" << o.value("size", 0)
                    << " bytes, sha256 " << o.value("sha256", "") << ")\n";
      return Status::Ok();
    };
  });
  auto get_args = std::make_shared<Args>();
  CLI::App* get = group.add_subcommand("get", "Download an object: adapt object get KEY [LOCAL]");
  get->add_option("key", get_args->first, "object key")->required();
  get->add_option("local", get_args->second,
                  "local file (default: the key's last part; '-': stdout)");
  get->callback([get_args, &invocation] {
    invocation.run = [get_args](const ApiClient& client, const Console& console) -> Status {
      std::string local = get_args->second;
      if (local.empty()) local = get_args->first.substr(get_args->first.rfind('/') + 1);
      if (local == "-") {
        FilePtr tmp(std::tmpfile(), &std::fclose);
        if (!tmp) return Internal("cannot create a temporary file");
        RETURN_IF_ERROR(CheckAnswer(GetStream(client, ContentPath(get_args->first), tmp.get())));
        std::rewind(tmp.get());
        char buf[65536];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, tmp.get())) > 0) console.out.write(buf, n);
        return Status::Ok();
      }
      RETURN_IF_ERROR(DownloadToFile(client, ContentPath(get_args->first), local));
      console.out << "downloaded " << get_args->first << " to " << local << "\n";
      return Status::Ok();
    };
  });
  auto rm_key = std::make_shared<std::string>();
  CLI::App* rm = group.add_subcommand("rm", "Delete an object: adapt object rm KEY");
  rm->add_option("key", *rm_key, "object key")->required();
  rm->callback([rm_key, &invocation] {
    invocation.run = [rm_key](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(JsonOrError(client.Delete(ContentPath(*rm_key))).status());
      console.out << "deleted " << *rm_key << "\n";
      return Status::Ok();
    };
  });
  auto url_args = std::make_shared<Args>();
  CLI::App* url = group.add_subcommand(
      "url", "A temporary read-only download link for one object: adapt object url KEY [--ttl S]");
  url->add_option("key", url_args->first, "object key")->required();
  url->add_option("--ttl", url_args->ttl, "seconds the link is valid [3600]");
  url->callback([url_args, &invocation] {
    invocation.run = [url_args, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(
          nlohmann::json u,
          JsonOrError(client.Post("/v1/objects/url",
                                  {{"key", url_args->first}, {"ttlSeconds", url_args->ttl}})));
      if (invocation.json)
        console.out << PrettyJson(u);
      else
        console.out << u.value("url", "") << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace

void AddObjectCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("object", "Private object storage of your organization");
  group->require_subcommand(1);
  AddObjectLs(*group, invocation);
  AddObjectTransfer(*group, invocation);
  AddArtifactCommands(*group, invocation);
  AddStorageTokenCommands(*group, invocation);
}

void AddSiteCommands(CLI::App& app, Invocation& invocation) {
  CLI::App* group = app.add_subcommand("site", "Static websites published from object storage");
  group->require_subcommand(1);
  struct Args {
    std::string source, name, idempotency_key;
  };
  auto args = std::make_shared<Args>();
  CLI::App* publish = group->add_subcommand(
      "publish",
      "Publish an object prefix holding index.html: adapt site publish PREFIX [--name N]");
  publish->add_option("source", args->source, "object prefix (directory) with index.html")
      ->required();
  publish->add_option("--name", args->name, "site name (a new release when it exists)");
  publish->add_option("--idempotency-key", args->idempotency_key,
                      "retry-safe publish key (the same key and request: no second release)");
  publish->callback([args, &invocation] {
    invocation.run = [args, &invocation](const ApiClient& client, const Console& console) {
      nlohmann::json body = {{"source", args->source}};
      if (!args->name.empty()) body["name"] = args->name;
      ASSIGN_OR_RETURN(
          nlohmann::json s,
          JsonOrError(client.Post("/v1/sites", body, IdempotencyHeaders(args->idempotency_key))));
      if (invocation.json)
        console.out << PrettyJson(s);
      else
        console.out << FormatTable({"ID", "NAME", "RELEASE", "URL"}, {SiteRow(s)});
      return Status::Ok();
    };
  });
  CLI::App* ls = group->add_subcommand("ls", "List static websites, newest first");
  auto ls_page = AddListPageOptions(*ls);
  ls->callback([ls_page, &invocation] {
    invocation.run = [ls_page, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json page,
                       JsonOrError(client.Get(ListPagePath("/v1/sites", *ls_page))));
      if (invocation.json) {
        console.out << PrettyJson(page);
        return Status::Ok();
      }
      std::vector<TableRow> rows;
      for (const auto& s : page.value("items", nlohmann::json::array())) rows.push_back(SiteRow(s));
      console.out << FormatTable({"ID", "NAME", "RELEASE", "URL"}, rows) << FormatNextCursor(page);
      return Status::Ok();
    };
  });
  auto id = std::make_shared<std::string>();
  CLI::App* rm = group->add_subcommand("rm", "Delete a static website and its releases");
  rm->add_option("id", *id, "site id or name")->required();
  rm->callback([id, &invocation] {
    invocation.run = [id](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(JsonOrError(client.Delete("/v1/sites/" + EscapeUrlComponent(*id))).status());
      console.out << "deleted " << *id << "\n";
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli
