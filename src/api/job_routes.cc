// /v1/jobs and /v1/runs: translation between HTTP and core::JobService, nothing more.
#include "api/errors.h"
#include "api/job_json.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/ids.h"
#include "base/request_fingerprint.h"

namespace adapt::api {

void AddJobRoutes(Router& router, core::JobService& jobs) {
  // 201 with the queued job; 200 with the first one when an Idempotency-Key replays it.
  router.Add("POST", "/v1/jobs",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto submit = SubmitJobFromJson(*body);
               if (!submit.ok()) return ErrorResponse(submit.status());
               std::optional<core::IdempotencyRequest> key;
               if (req.headers.count("idempotency-key"))
                 key = core::IdempotencyRequest{req.Header("idempotency-key"),
                                                RequestFingerprint(body->dump())};
               auto out = jobs.Submit(who, *submit, key, RestJobFields());
               if (!out.ok()) return ErrorResponse(out.status());
               return JsonResponse(out->replayed ? 200 : 201, JobToJson(out->job));
             });
  router.Add("GET", "/v1/jobs",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page_request = PageRequestFromQuery(req);
               if (!page_request.ok()) return ErrorResponse(page_request.status());
               core::ListJobsRequest list;
               list.limit = page_request->limit;
               list.cursor = page_request->cursor;
               auto page = jobs.List(who, list);
               if (!page.ok()) return ErrorResponse(page.status());
               return JsonResponse(200, JobPageToJson(*page));
             });
  router.Add("GET", "/v1/jobs/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto job = jobs.Get(who, p.at("id"));
               if (!job.ok()) return ErrorResponse(job.status());
               return JsonResponse(200, JobToJson(*job));
             });
  router.Add("POST", "/v1/jobs/{id}/cancel",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto job = jobs.Cancel(who, p.at("id"));
               if (!job.ok()) return ErrorResponse(job.status());
               return JsonResponse(200, JobToJson(*job));
             });
  router.Add("DELETE", "/v1/jobs/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(jobs.Delete(who, p.at("id")));
             });
  router.Add("GET", "/v1/runs",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page_request = PageRequestFromQuery(req, {"jobId", "automationId"});
               if (!page_request.ok()) return ErrorResponse(page_request.status());
               core::ListRunsRequest list;
               list.limit = page_request->limit;
               list.cursor = page_request->cursor;
               if (req.query.count("jobId")) list.job_id = req.query.at("jobId");
               if (req.query.count("automationId"))
                 list.automation_id = req.query.at("automationId");
               auto page = jobs.ListRuns(who, list);
               if (!page.ok()) return ErrorResponse(page.status());
               return JsonResponse(200, RunPageToJson(*page));
             });
  router.Add("GET", "/v1/runs/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto run = jobs.GetRun(who, p.at("id"));
               if (!run.ok()) return ErrorResponse(run.status());
               return JsonResponse(200, RunToJson(*run));
             });
  // Best effort: 202 with the run as it is; it ends cancelled shortly.
  router.Add("POST", "/v1/runs/{id}/cancel",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto run = jobs.CancelRun(who, p.at("id"));
               if (!run.ok()) return ErrorResponse(run.status());
               return JsonResponse(202, RunToJson(*run));
             });
}

}  // namespace adapt::api
