// /v1/apps: translation between HTTP and core::AppService, nothing more.
#include "api/app_json.h"
#include "api/errors.h"
#include "api/list_page.h"
#include "api/operation_json.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddAppRoutes(Router& router, core::AppService& apps) {
  // Waits up to waitSeconds for the build, the packaging and the first replica: 201 with the
  // app, the deploy's error, or 202 with its operation (GET /v1/operations/{id}).
  router.Add("POST", "/v1/apps",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto deploy = DeployAppFromJson(*body);
               if (!deploy.ok()) return ErrorResponse(deploy.status());
               auto wait = DeployWaitFromJson(*body);
               if (!wait.ok()) return ErrorResponse(wait.status());
               auto done = apps.Deploy(who, *deploy, std::chrono::seconds(*wait), RestAppFields(),
                                       IdempotencyKeyOf(req, *body));
               if (!done.ok()) return ErrorResponse(done.status());
               if (done->app) return JsonResponse(201, AppToJson(*done->app));
               return JsonResponse(202, OperationJson(done->operation));
             });
  router.Add("GET", "/v1/apps",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = apps.List(who, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(
                   200, PageJson(*list, [](const core::App& a) { return AppToJson(a); }));
             });
  router.Add("GET", "/v1/apps/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto app = apps.Get(who, p.at("id"));
               if (!app.ok()) return ErrorResponse(app.status());
               return JsonResponse(200, AppToJson(*app));
             });
  router.Add("POST", "/v1/apps/{id}/scale",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto replicas = ScaleFromJson(*body);
               if (!replicas.ok()) return ErrorResponse(replicas.status());
               auto app = apps.Scale(who, p.at("id"), *replicas, RestAppFields());
               if (!app.ok()) return ErrorResponse(app.status());
               return JsonResponse(200, AppToJson(*app));
             });
  // An operation like a deploy (the release's replicas start before the others go): waits up
  // to waitSeconds, then 200 with the app, the rollback's error, or 202 with its operation.
  router.Add("POST", "/v1/apps/{id}/rollback",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto release = RollbackFromJson(*body);
               if (!release.ok()) return ErrorResponse(release.status());
               auto wait = DeployWaitFromJson(*body);
               if (!wait.ok()) return ErrorResponse(wait.status());
               auto done = apps.Rollback(who, p.at("id"), *release, std::chrono::seconds(*wait),
                                         RestAppFields());
               if (!done.ok()) return ErrorResponse(done.status());
               if (done->app) return JsonResponse(200, AppToJson(*done->app));
               return JsonResponse(202, OperationJson(done->operation));
             });
  router.Add("GET", "/v1/apps/{id}/releases",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto releases = apps.Releases(who, p.at("id"), *page);
               if (!releases.ok()) return ErrorResponse(releases.status());
               return JsonResponse(200, PageJson(*releases, AppReleaseToJson));
             });
  // Not a list of records (API.md's lists): each replica's latest output, a snapshot.
  router.Add("GET", "/v1/apps/{id}/logs",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto logs = apps.Logs(who, p.at("id"));
               if (!logs.ok()) return ErrorResponse(logs.status());
               nlohmann::json items = nlohmann::json::array();
               for (const auto& l : *logs) items.push_back(AppReplicaLogToJson(l));
               return JsonResponse(200, {{"items", items}});
             });
  router.Add("DELETE", "/v1/apps/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(apps.Delete(who, p.at("id")));
             });
}

}  // namespace adapt::api
