// /v1/automations: translation between HTTP and core::AutomationService, nothing more.
#include "api/automation_json.h"
#include "api/errors.h"
#include "api/job_json.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {
namespace {

// If-Match: the version the client read ("3", or the entity tag "\"3\""); absent: none.
Result<std::optional<int64_t>> IfMatchVersion(const HttpRequest& req) {
  if (!req.headers.count("if-match")) return std::optional<int64_t>();
  std::string v = req.Header("if-match");
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("If-Match", "If-Match must be the automation's version, a number");
  return std::optional<int64_t>(std::stoll(v));
}

HttpResponse SetAutomationEnabled(core::AutomationService& automations, const HttpRequest& req,
                                  const PathParams& p, const core::Principal& who, bool enabled) {
  auto version = IfMatchVersion(req);
  if (!version.ok()) return ErrorResponse(version.status());
  auto a = automations.SetEnabled(who, p.at("id"), enabled, *version);
  if (!a.ok()) return ErrorResponse(a.status());
  return JsonResponse(200, AutomationToJson(*a));
}

}  // namespace

void AddAutomationRoutes(Router& router, core::AutomationService& automations) {
  router.Add("POST", "/v1/automations",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto create = CreateAutomationFromJson(*body);
               if (!create.ok()) return ErrorResponse(create.status());
               auto a = automations.Create(who, *create, RestAutomationFields(),
                                           IdempotencyKeyOf(req, *body));
               if (!a.ok()) return ErrorResponse(a.status());
               return JsonResponse(201, AutomationToJson(*a));
             });
  router.Add("GET", "/v1/automations",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = automations.List(who, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, [](const core::Automation& a) {
                                     return AutomationToJson(a);
                                   }));
             });
  router.Add("GET", "/v1/automations/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto a = automations.Get(who, p.at("id"));
               if (!a.ok()) return ErrorResponse(a.status());
               return JsonResponse(200, AutomationToJson(*a));
             });
  router.Add("POST", "/v1/automations/{id}/enable",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               return SetAutomationEnabled(automations, req, p, who, true);
             });
  router.Add("POST", "/v1/automations/{id}/disable",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               return SetAutomationEnabled(automations, req, p, who, false);
             });
  // 202 with the manual run as it starts; it ends on its own (GET /v1/runs/{id}).
  router.Add("POST", "/v1/automations/{id}/trigger",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               // The trigger takes no body: the key's fingerprint is the path alone.
               auto run = automations.Trigger(who, p.at("id"),
                                              IdempotencyKeyOf(req, nlohmann::json::object()));
               if (!run.ok()) return ErrorResponse(run.status());
               return JsonResponse(202, RunToJson(*run));
             });
  router.Add("DELETE", "/v1/automations/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(automations.Delete(who, p.at("id")));
             });
}

}  // namespace adapt::api
