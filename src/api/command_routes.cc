// /v1/sandboxes/{id}/commands and /python: translation between HTTP and core::CommandService.
#include "api/command_mapping.h"
#include "api/command_stream.h"
#include "api/command_wait.h"
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

namespace {

using Clock = std::chrono::steady_clock;

// True when `refusal` came because the sandbox is still booting: the caller that waits then
// waits for the boot too.
bool Booting(core::SandboxService& sandboxes, const core::Principal& who, const std::string& id,
             const Status& refusal) {
  if (refusal.code() != Code::kConflict) return false;
  auto sandbox = sandboxes.Get(who, id);
  return sandbox.ok() && sandbox->status == "provisioning";
}

// The answer to a start: the command's wait (it holds no worker: the answer comes when the
// command ends), or, for a sandbox still booting and a caller that waits, the boot's wait
// before it (`again` starts the command then), or the refusal.
HttpResponse Answer(core::SandboxService& sandboxes, core::CommandService& commands,
                    boost::asio::thread_pool& workers, const core::Principal& who,
                    const std::string& id, const Result<core::StartedCommand>& started,
                    int wait_seconds, CommandWaitKind kind, CommandStart again) {
  const auto deadline = Clock::now() + std::chrono::seconds(wait_seconds);
  HttpResponse r;
  if (started.ok()) {
    r.deferred = MakeCommandWait(commands, workers, who, id, started->id, deadline, kind);
  } else if (wait_seconds > 0 && Booting(sandboxes, who, id, started.status())) {
    r.deferred = MakeBootThenCommandWait(sandboxes, commands, workers, who, id, std::move(again),
                                         deadline, kind);
  } else {
    return ErrorResponse(started.status());
  }
  return r;
}

}  // namespace

void AddCommandRoutes(Router& router, core::SandboxService& sandboxes,
                      core::CommandService& commands, boost::asio::thread_pool& workers) {
  router.Add("POST", "/v1/sandboxes/{id}/commands",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto command = ParseRunCommand(*body);
               if (!command.ok()) return ErrorResponse(command.status());
               const int wait_seconds = command->wait_seconds;
               auto started = commands.Start(who, p.at("id"), std::move(*command));
               // Start took the request: a later start parses the body again (it parsed once).
               CommandStart again = [&commands, who, id = p.at("id"), request = std::move(*body)] {
                 auto command = ParseRunCommand(request);
                 if (!command.ok()) return Result<core::StartedCommand>(command.status());
                 return commands.Start(who, id, std::move(*command));
               };
               return Answer(sandboxes, commands, workers, who, p.at("id"), started, wait_seconds,
                             CommandWaitKind::kRun, std::move(again));
             });
  router.Add("POST", "/v1/sandboxes/{id}/python",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto python = ParseRunPython(*body);
               if (!python.ok()) return ErrorResponse(python.status());
               auto started = commands.StartPython(who, p.at("id"), *python);
               // A caller that does not wait (waitSeconds 0: it streams the output) gets the
               // command whether or not it ended meanwhile, so its answer does not depend on
               // how fast the run was: a missing python3 is then the record's exit code 127.
               const int wait_seconds = python->wait_seconds;
               auto kind = wait_seconds > 0 ? CommandWaitKind::kPython : CommandWaitKind::kRun;
               // Moved, not copied: the program may be 8 MiB.
               CommandStart again = [&commands, who, id = p.at("id"), python = std::move(*python)] {
                 return commands.StartPython(who, id, python);
               };
               return Answer(sandboxes, commands, workers, who, p.at("id"), started, wait_seconds,
                             kind, std::move(again));
             });
  router.Add("GET", "/v1/sandboxes/{id}/commands",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto page_request = PageRequestFromQuery(req);
               if (!page_request.ok()) return ErrorResponse(page_request.status());
               core::ListCommandsRequest list;
               list.limit = page_request->limit;
               list.cursor = page_request->cursor;
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
