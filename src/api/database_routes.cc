// /v1/database: translation between HTTP and core::DatabaseService. No answer ever holds the
// database's host or password (sandboxes created with "database": true get those).
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

json DatabaseJson(const core::DatabaseView& d) {
  return {{"status", d.status},
          {"postgresVersion", d.version.empty() ? json(nullptr) : json(d.version)},
          {"sizeBytes", d.size_bytes},
          {"quotaBytes", d.quota_bytes},
          {"connections", d.connections},
          {"connectionLimit", d.connection_limit},
          {"createdAt", d.created_at ? json(FormatRfc3339(d.created_at)) : json(nullptr)}};
}

json DumpJson(const core::DatabaseDump& d) {
  return {{"bucket", d.bucket},
          {"key", d.key},
          {"sizeBytes", d.size_bytes},
          {"sha256", d.sha256},
          {"createdAt", FormatRfc3339(d.created_at)}};
}

}  // namespace

void AddDatabaseRoutes(Router& router, core::DatabaseService& databases) {
  router.Add("GET", "/v1/database",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto view = databases.Describe(who);
               if (!view.ok()) return ErrorResponse(view.status());
               return JsonResponse(200, DatabaseJson(*view));
             });
  // Makes the organization's database (idempotent: an existing one is described).
  router.Add("POST", "/v1/database",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto view = databases.Create(who);
               if (!view.ok()) return ErrorResponse(view.status());
               return JsonResponse(200, DatabaseJson(*view));
             });
  // A new password for the owner role; sandboxes created afterwards get it.
  router.Add("POST", "/v1/database/rotate",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto view = databases.RotatePassword(who);
               if (!view.ok()) return ErrorResponse(view.status());
               return JsonResponse(200, DatabaseJson(*view));
             });
  // A pg_dump custom-format archive into the organization's object storage.
  router.Add("POST", "/v1/database/dump",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto dump = databases.Dump(who);
               if (!dump.ok()) return ErrorResponse(dump.status());
               return JsonResponse(201, DumpJson(*dump));
             });
  // The confirmation comes as {"confirm": "<org id>"} or ?confirm=<org id>, as storage's.
  router.Add("DELETE", "/v1/database",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto confirm = DeleteConfirmation(req, "the organization's id");
               if (!confirm.ok()) return ErrorResponse(confirm.status());
               return NoContentOrError(databases.Delete(who, *confirm));
             });
}

}  // namespace adapt::api
