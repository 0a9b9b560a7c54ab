// /v1/sandboxes/{id}/files and /archive: translation between HTTP and core::FileService.
// Uploads read the request body as it arrives (StreamsRequestBody) and downloads stream the
// agent's output, so neither holds a file in memory.
#include <atomic>

#include "api/errors.h"
#include "api/file_download.h"
#include "api/file_listing_json.h"
#include "api/request_parsing.h"
#include "api/routes.h"

namespace adapt::api {
namespace {

using nlohmann::json;

// {name, type, size, mode, mtime, linkTarget?}, as docs/openapi.yaml describes a file entry.
nlohmann::json FileEntryJson(const core::FileEntry& e) {
  nlohmann::json v = {
      {"name", e.name}, {"type", e.type}, {"size", e.size}, {"mode", e.mode}, {"mtime", e.mtime}};
  if (e.link_target) v["linkTarget"] = *e.link_target;
  return v;
}

HttpResponse Served(HttpResponse r, const std::string& served_by) {
  if (!served_by.empty()) r.headers.emplace_back(kServedByHeader, served_by);
  return r;
}

Result<bool> QueryFlag(const HttpRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  if (it == req.query.end() || it->second == "0" || it->second == "false") return false;
  if (it->second == "1" || it->second == "true") return true;
  return InvalidArgument(name, name + " must be 1, 0, true or false");
}

// Reads the streamed body, counting bytes.
core::ByteSource BodySource(const HttpRequest& req, std::shared_ptr<uint64_t> count) {
  return [body = RequestBodyReader(req), count](char* buf, size_t n) -> long {
    long got = body(buf, n);
    if (got > 0) *count += static_cast<uint64_t>(got);
    return got;
  };
}

bool IsSandboxSubresource(std::string_view path, std::string_view leaf) {
  constexpr std::string_view kPrefix = "/v1/sandboxes/";
  if (path.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = path.substr(kPrefix.size());
  size_t slash = rest.find('/');
  return slash != std::string_view::npos && slash > 0 && rest.substr(slash + 1) == leaf;
}

}  // namespace

bool StreamsRequestBody(std::string_view method, std::string_view path) {
  return (method == "PUT" &&
          (IsSandboxSubresource(path, "files") || IsSandboxSubresource(path, "archive"))) ||
         (method == "POST" && path == "/v1/images/import");
}

void AddFileRoutes(Router& router, core::FileService& files) {
  router.Add("PUT", "/v1/sandboxes/{id}/files",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto path = QueryFilePath(req);
               if (!path.ok()) return ErrorResponse(path.status());
               std::string mode = req.query.count("mode") ? req.query.at("mode") : "";
               auto count = std::make_shared<uint64_t>(0);
               std::string served;
               Status st =
                   files.Upload(who, p.at("id"), *path, mode, BodySource(req, count), &served);
               if (!st.ok()) return ErrorResponse(st);
               return Served(JsonResponse(200, {{"path", *path}, {"size", *count}}), served);
             });
  router.Add("GET", "/v1/sandboxes/{id}/files",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto path = QueryFilePath(req);
               if (!path.ok()) return ErrorResponse(path.status());
               auto list = QueryFlag(req, "list");
               if (!list.ok()) return ErrorResponse(list.status());
               auto stat = QueryFlag(req, "stat");
               if (!stat.ok()) return ErrorResponse(stat.status());
               std::string served;
               if (*list) {
                 auto listing = files.List(who, p.at("id"), *path, &served);
                 if (!listing.ok()) return ErrorResponse(listing.status());
                 HttpResponse r;
                 r.status = 200;
                 r.body = FileListingJsonText(*listing);
                 return Served(std::move(r), served);
               }
               if (*stat) {
                 auto info = files.Stat(who, p.at("id"), *path, &served);
                 if (!info.ok()) return ErrorResponse(info.status());
                 return Served(JsonResponse(200, FileEntryJson(*info)), served);
               }
               auto reader = files.Download(who, p.at("id"), *path);
               if (!reader.ok()) return ErrorResponse(reader.status());
               return FileDownload(std::move(*reader), "application/octet-stream");
             });
  router.Add("DELETE", "/v1/sandboxes/{id}/files",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto path = QueryFilePath(req);
               if (!path.ok()) return ErrorResponse(path.status());
               auto recursive = QueryFlag(req, "recursive");
               if (!recursive.ok()) return ErrorResponse(recursive.status());
               std::string served;
               Status st = files.Remove(who, p.at("id"), *path, *recursive, &served);
               if (!st.ok()) return ErrorResponse(st);
               HttpResponse r;
               r.status = 204;
               return Served(std::move(r), served);
             });
  router.Add("POST", "/v1/sandboxes/{id}/files/mkdir",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               for (const auto& [key, _] : body->items()) {
                 if (key != "path" && key != "parents")
                   return ErrorResponse(InvalidArgument(key, "unknown field " + key));
               }
               if (!body->contains("path") || !(*body)["path"].is_string())
                 return ErrorResponse(InvalidArgument("path", "path must be a string"));
               bool parents = false;
               if (body->contains("parents")) {
                 if (!(*body)["parents"].is_boolean())
                   return ErrorResponse(InvalidArgument("parents", "parents must be a boolean"));
                 parents = (*body)["parents"].get<bool>();
               }
               std::string path = (*body)["path"].get<std::string>();
               std::string served;
               Status st = files.MakeDir(who, p.at("id"), path, parents, &served);
               if (!st.ok()) return ErrorResponse(st);
               return Served(JsonResponse(201, {{"path", path}}), served);
             });
  router.Add("GET", "/v1/sandboxes/{id}/archive",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto path = QueryFilePath(req);
               if (!path.ok()) return ErrorResponse(path.status());
               auto reader = files.ArchiveGet(who, p.at("id"), *path);
               if (!reader.ok()) return ErrorResponse(reader.status());
               return FileDownload(std::move(*reader), "application/x-tar");
             });
  router.Add("PUT", "/v1/sandboxes/{id}/archive",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto path = QueryFilePath(req);
               if (!path.ok()) return ErrorResponse(path.status());
               auto count = std::make_shared<uint64_t>(0);
               std::string served;
               Status st =
                   files.ArchivePut(who, p.at("id"), *path, BodySource(req, count), &served);
               if (!st.ok()) return ErrorResponse(st);
               return Served(JsonResponse(200, {{"path", *path}, {"size", *count}}), served);
             });
}

}  // namespace adapt::api
