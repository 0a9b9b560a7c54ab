// /v1/storage: translation between HTTP and storage::VolumeService (and core::StorageFiles for
// a volume's files).
#include "api/errors.h"
#include "api/file_download.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

Status VolumeSizeError() {
  return InvalidArgument("sizeMiB", "sizeMiB must be an integer between " +
                                        std::to_string(storage::limits::kSizeMiBMin) + " and " +
                                        std::to_string(storage::limits::kSizeMiBMax));
}

// The storage layer names the size `size_mib`; REST calls it sizeMiB.
Status VolumeErrorInRestTerms(const Status& status) {
  if (status.field() == "size_mib") return VolumeSizeError();
  return status;
}

// POST /v1/storage: {"name": "...", "sizeMiB": 2048}.
Result<storage::CreateVolumeRequest> ParseVolumeCreate(const json& body) {
  for (const auto& [key, _] : body.items()) {
    if (key != "name" && key != "sizeMiB")
      return InvalidArgument(key, "unknown field '" + key + "'");
  }
  storage::CreateVolumeRequest req;
  if (!body.contains("name") || !body["name"].is_string())
    return InvalidArgument("name", "name is required: the storage's name");
  req.name = body["name"];
  if (body.contains("sizeMiB") && !body["sizeMiB"].is_null()) {
    const json& size = body["sizeMiB"];
    if (!size.is_number_integer() ||
        (size.is_number_unsigned() && size.get<uint64_t>() > storage::limits::kSizeMiBMax))
      return VolumeSizeError();
    req.size_mib = size.get<int64_t>();
  }
  return req;
}

json VolumeJson(const storage::Volume& v) {
  json attachments = json::array();
  for (const auto& a : v.attachments)
    attachments.push_back({{"sandboxId", a.sandbox_id}, {"status", a.status}});
  return {{"id", v.id},
          {"name", v.name},
          {"sizeMiB", v.size_mib},
          {"usedBytes", v.used_bytes ? json(*v.used_bytes) : json(nullptr)},
          {"availableBytes", v.available_bytes ? json(*v.available_bytes) : json(nullptr)},
          {"status", v.status},
          {"default", v.is_default},
          {"encrypted", v.encrypted},
          {"mountPath", v.mount_path},
          {"attachments", attachments},
          {"createdAt", FormatRfc3339(v.created_at)}};
}

}  // namespace

void AddStorageRoutes(Router& router, storage::VolumeService& volumes,
                      const core::StorageFiles& files) {
  router.Add("POST", "/v1/storage",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto request = ParseVolumeCreate(*body);
               if (!request.ok()) return ErrorResponse(request.status());
               auto volume = volumes.Create(who.org_id, *request, IdempotencyKeyOf(req, *body));
               if (!volume.ok()) return ErrorResponse(VolumeErrorInRestTerms(volume.status()));
               return JsonResponse(201, VolumeJson(*volume));
             });
  router.Add("GET", "/v1/storage",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = volumes.List(who.org_id, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               json items = json::array();
               for (const auto& v : list->items) items.push_back(VolumeJson(v));
               return JsonResponse(
                   200, {{"items", items}, {"nextCursor", NextCursorJson(list->next_cursor)}});
             });
  router.Add("GET", "/v1/storage/{name}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto volume = volumes.Get(who.org_id, p.at("name"));
               if (!volume.ok()) return ErrorResponse(volume.status());
               return JsonResponse(200, VolumeJson(*volume));
             });
  // A file of the storage, read from the host whether or not a sandbox mounts it (seed 000's
  // read_workspace_file: "from the user's persistent workspace").
  router.Add("GET", "/v1/storage/{name}/files",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto path = QueryFilePath(req);
               if (!path.ok()) return ErrorResponse(path.status());
               auto reader = files.Open(who, p.at("name"), *path);
               if (!reader.ok()) return ErrorResponse(reader.status());
               return FileDownload(std::move(*reader), "application/octet-stream");
             });
  // The confirmation comes as {"confirm": "<name>"} or ?confirm=<name>.
  router.Add("DELETE", "/v1/storage/{name}",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto confirm = DeleteConfirmation(req, "the storage's name");
               if (!confirm.ok()) return ErrorResponse(confirm.status());
               return NoContentOrError(volumes.Delete(who.org_id, p.at("name"), *confirm));
             });
}

}  // namespace adapt::api
