// /v1/sandboxes: translation between HTTP and core::SandboxService, nothing more.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "api/sandbox_json.h"
#include "api/sandbox_json_text.h"
#include "api/sandbox_settled_wait.h"
#include "base/ids.h"
#include "base/request_fingerprint.h"

namespace adapt::api {
namespace {

// A 200 with the sandbox JSON written as text (sandbox_json_text.h): the hot reads' answers.
HttpResponse TextResponse(std::string body) {
  HttpResponse r;
  r.status = 200;
  r.body = std::move(body);
  return r;
}

// A stop's or start's answer: the sandbox, and beside it the operation to poll.
nlohmann::json PowerChangeToJson(const core::PowerChange& change) {
  nlohmann::json out = SandboxToJson(change.sandbox);
  out["operationId"] = change.operation_id;
  return out;
}

// The list takes limit, cursor and query only. Seed 001: "Status and other label filters are
// not supported; filter the returned records in your client": a filter it would ignore is
// refused rather than answered with every sandbox.
Status OnlyListParameters(const HttpRequest& req) {
  for (const auto& [name, _] : req.query) {
    if (name == "limit" || name == "cursor" || name == "query") continue;
    if (name == "status" || name.starts_with("label"))
      return InvalidArgument(name,
                             "status and label filters are not supported; filter the "
                             "returned records in your client (query matches a name or "
                             "the start of an id)");
    return InvalidArgument(
        name, "unknown query parameter '" + name + "'; the list takes limit, cursor and query");
  }
  return Status::Ok();
}

}  // namespace

void AddSandboxRoutes(Router& router, core::SandboxService& sandboxes,
                      boost::asio::thread_pool& workers) {
  router.Add("POST", "/v1/sandboxes",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               std::optional<core::IdempotencyRequest> key;
               if (req.headers.count("idempotency-key"))
                 key = core::IdempotencyRequest{req.Header("idempotency-key"),
                                                RequestFingerprint(body->dump())};
               if (body->is_object() && body->contains("fromCheckpoint")) {
                 auto fork = ForkSandboxFromJson(*body);
                 if (!fork.ok()) return ErrorResponse(fork.status());
                 auto forked = sandboxes.Fork(who, *fork, key, RestSandboxFields());
                 if (!forked.ok()) return ErrorResponse(forked.status());
                 return JsonResponse(201, PowerChangeToJson(*forked));
               }
               auto create = CreateSandboxFromJson(*body);
               if (!create.ok()) return ErrorResponse(create.status());
               auto created = sandboxes.Create(who, *create, key, RestSandboxFields());
               if (!created.ok()) return ErrorResponse(created.status());
               return JsonResponse(201, SandboxToJson(*created));
             });
  router.Add("GET", "/v1/sandboxes",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               if (Status known = OnlyListParameters(req); !known.ok()) return ErrorResponse(known);
               auto page_request = PageRequestFromQuery(req, {"query"});
               if (!page_request.ok()) return ErrorResponse(page_request.status());
               core::ListSandboxesRequest list;
               list.limit = page_request->limit;
               list.cursor = page_request->cursor;
               if (req.query.count("query")) list.query = req.query.at("query");
               auto page = sandboxes.List(who, list);
               if (!page.ok()) return ErrorResponse(page.status());
               return TextResponse(SandboxPageJsonText(*page));
             });
  // ?waitSeconds=N (MCP's wait_for_sandbox): the record once it is no longer provisioning,
  // or as it is after N seconds.
  router.Add("GET", "/v1/sandboxes/{id}",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto wait = QueryInt(req, "waitSeconds", 0);
               if (!wait.ok()) return ErrorResponse(wait.status());
               if (*wait < 0 || *wait > kMaxSandboxWaitSeconds)
                 return ErrorResponse(InvalidArgument(
                     "waitSeconds",
                     "waitSeconds must be from 0 to " + std::to_string(kMaxSandboxWaitSeconds)));
               // Read first either way: an unknown id is a 404 at once, and a sandbox that is
               // not provisioning answers now.
               auto sandbox = sandboxes.Get(who, p.at("id"));
               if (!sandbox.ok()) return ErrorResponse(sandbox.status());
               if (*wait > 0 && sandbox->status == "provisioning") {
                 HttpResponse r;
                 r.deferred = MakeSandboxSettledWait(sandboxes, workers, who, p.at("id"),
                                                     std::chrono::seconds(*wait));
                 return r;
               }
               return TextResponse(SandboxJsonText(*sandbox));
             });
  router.Add("DELETE", "/v1/sandboxes/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto outcome = sandboxes.Delete(who, p.at("id"));
               if (!outcome.ok()) return ErrorResponse(outcome.status());
               if (outcome->done) return NoContentOrError(Status::Ok());
               auto sandbox = sandboxes.Get(who, p.at("id"));
               return JsonResponse(
                   202, sandbox.ok() ? SandboxToJson(*sandbox) : nlohmann::json::object());
             });
  // Stop and start take no fields; an empty body or {} is accepted.
  auto no_fields = [](const HttpRequest& req) -> Status {
    ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(req));
    if (!body.empty())
      return InvalidArgument(body.begin().key(), "unknown field " + body.begin().key());
    return Status::Ok();
  };
  router.Add(
      "POST", "/v1/sandboxes/{id}/stop",
      [&, no_fields](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        if (Status st = no_fields(req); !st.ok()) return ErrorResponse(st);
        auto stopped = sandboxes.Stop(who, p.at("id"));
        if (!stopped.ok()) return ErrorResponse(stopped.status());
        return JsonResponse(200, PowerChangeToJson(*stopped));
      });
  router.Add(
      "POST", "/v1/sandboxes/{id}/start",
      [&, no_fields](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        if (Status st = no_fields(req); !st.ok()) return ErrorResponse(st);
        auto started = sandboxes.Start(who, p.at("id"));
        if (!started.ok()) return ErrorResponse(started.status());
        return JsonResponse(202, PowerChangeToJson(*started));
      });
}

}  // namespace adapt::api
