// /v1/sandboxes/{id}/commands and /python: translation between HTTP and core::CommandService.
#include "api/command_mapping.h"
#include "api/command_stream.h"
#include "api/command_wait.h"
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddCommandRoutes(Router& router, core::CommandService& commands,
                      boost::asio::thread_pool& workers) {
  router.Add("POST", "/v1/sandboxes/{id}/commands",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto command = ParseRunCommand(*body);
               if (!command.ok()) return ErrorResponse(command.status());
               auto started = commands.Start(who, p.at("id"), std::move(*command));
               if (!started.ok()) return ErrorResponse(started.status());
               // The wait holds no worker: the answer comes when the command ends.
               HttpResponse r;
               r.deferred = MakeCommandWait(
                   commands, workers, who, p.at("id"), started->id,
                   std::chrono::steady_clock::now() + std::chrono::seconds(started->wait_seconds),
                   CommandWaitKind::kRun);
               return r;
             });
  router.Add("POST", "/v1/sandboxes/{id}/python",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto python = ParseRunPython(*body);
               if (!python.ok()) return ErrorResponse(python.status());
               auto started = commands.StartPython(who, p.at("id"), *python);
               if (!started.ok()) return ErrorResponse(started.status());
               HttpResponse r;
               // A caller that does not wait (waitSeconds 0: it streams the output) gets the
               // command whether or not it ended meanwhile, so its answer does not depend on
               // how fast the run was: a missing python3 is then the record's exit code 127.
               r.deferred = MakeCommandWait(
                   commands, workers, who, p.at("id"), started->id,
                   std::chrono::steady_clock::now() + std::chrono::seconds(started->wait_seconds),
                   started->wait_seconds > 0 ? CommandWaitKind::kPython : CommandWaitKind::kRun);
               return r;
             });
  router.Add("GET", "/v1/sandboxes/{id}/commands",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto limit = QueryInt(req, "limit", 50);
               if (!limit.ok()) return ErrorResponse(limit.status());
               core::ListCommandsRequest list;
               list.limit = *limit;
               if (req.query.count("cursor")) list.cursor = req.query.at("cursor");
               auto page = commands.List(who, p.at("id"), list);
               if (!page.ok()) return ErrorResponse(page.status());
               return JsonResponse(200, CommandPageToJson(*page));
             });
  router.Add("GET", "/v1/sandboxes/{id}/commands/{cid}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto command = commands.Get(who, p.at("id"), p.at("cid"));
               if (!command.ok()) return ErrorResponse(command.status());
               return JsonResponse(200, CommandToJson(*command));
             });
  router.Add("GET", "/v1/sandboxes/{id}/commands/{cid}/stream",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               // Unknown or foreign ids answer an error before the stream starts.
               auto command = commands.Get(who, p.at("id"), p.at("cid"));
               if (!command.ok()) return ErrorResponse(command.status());
               HttpResponse r;
               r.content_type = "text/event-stream";
               r.stream = MakeCommandOutputStream(commands, who, p.at("id"), p.at("cid"));
               return r;
             });
  router.Add("DELETE", "/v1/sandboxes/{id}/commands/{cid}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto killed = commands.Kill(who, p.at("id"), p.at("cid"));
               if (!killed.ok()) return ErrorResponse(killed.status());
               if (killed->finished) return JsonResponse(200, CommandToJson(killed->command));
               // The wait for the end holds no worker: the answer comes when the command ends.
               HttpResponse r;
               r.deferred = MakeCommandWait(
                   commands, workers, who, p.at("id"), p.at("cid"),
                   std::chrono::steady_clock::now() + core::CommandService::kKillWait,
                   CommandWaitKind::kKill);
               return r;
             });
}

}  // namespace adapt::api
