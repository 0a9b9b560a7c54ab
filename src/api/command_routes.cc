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
                   std::chrono::steady_clock::now() + std::chrono::seconds(started->wait_seconds));
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
               r.deferred = MakeCommandWait(
                   commands, workers, who, p.at("id"), started->id,
                   std::chrono::steady_clock::now() + std::chrono::seconds(started->wait_seconds),
                   /*python=*/true);
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
               return JsonOrError(200, page);
             });
  router.Add("GET", "/v1/sandboxes/{id}/commands/{cid}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto command = commands.Get(who, p.at("id"), p.at("cid"));
               return JsonOrError(200, command);
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
               auto command = commands.Kill(who, p.at("id"), p.at("cid"));
               return JsonOrError(200, command);
             });
}

}  // namespace adapt::api
