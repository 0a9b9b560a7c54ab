// Server-Sent Events of sandbox status changes (`event: status`) and, on the organization's
// stream, deployed apps' events (`event: app`), runs' status changes (`event: run`: jobs' and
// automations' runs) and its account alerts (`event: alert`: 80% / 100% of its credits used or
// of a plan limit, api/account_json.h). Events come from the store, so a client that reconnects
// with Last-Event-ID misses nothing; the bus only says when to look. An idle stream carries a
// comment every kHeartbeatInterval, so that clients and proxies can tell a quiet stream from a
// dead connection.
#include "api/errors.h"
#include "api/event_resume.h"
#include "api/routes.h"
#include "api/status_event_stream.h"

namespace adapt::api {
namespace {

Result<int64_t> LastEventId(const HttpRequest& req, int64_t fallback) {
  std::string v = req.Header("last-event-id");
  if (v.empty()) return fallback;
  if (v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("Last-Event-ID", "Last-Event-ID must be an event id this server sent");
  return std::stoll(v);
}

HttpResponse Stream(std::shared_ptr<ResponseStream> stream) {
  HttpResponse r;
  r.content_type = "text/event-stream";
  r.stream = std::move(stream);
  return r;
}

}  // namespace

void AddEventRoutes(Router& router, store::Store& store, core::EventBus& bus,
                    core::SandboxService& sandboxes, boost::asio::thread_pool& workers) {
  router.Add("GET", "/v1/events",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto latest = store.LatestEventSeq();
               if (!latest.ok()) return ErrorResponse(latest.status());
               auto requested = LastEventId(req, *latest);
               if (!requested.ok()) return ErrorResponse(requested.status());
               auto pruned = store.PrunedEventSeq();
               if (!pruned.ok()) return ErrorResponse(pruned.status());
               int pending = 0;
               if (*requested < *latest) {
                 auto behind = store.ListEvents(who.org_id, "", *requested, kEventReplayLimit + 1);
                 if (!behind.ok()) return ErrorResponse(behind.status());
                 pending = static_cast<int>(behind->size());
               }
               EventResume resume = ResumeEvents(*requested, *latest, pending, *pruned);
               auto stream = std::make_shared<StatusEventStream>(store, bus, workers, who.org_id,
                                                                 "", resume.after, resume.reason);
               stream->SetStillSignedIn(router.StillSignedIn(req, who));
               return Stream(std::move(stream));
             });
  router.Add("GET", "/v1/sandboxes/{id}/events",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               // The sandbox must be the caller's: another organization's id is a 404.
               auto sandbox = sandboxes.Get(who, p.at("id"));
               if (!sandbox.ok()) return ErrorResponse(sandbox.status());
               auto after = LastEventId(req, 0);
               if (!after.ok()) return ErrorResponse(after.status());
               auto stream = std::make_shared<StatusEventStream>(store, bus, workers, who.org_id,
                                                                 p.at("id"), *after);
               stream->SetStillSignedIn(router.StillSignedIn(req, who));
               return Stream(std::move(stream));
             });
}

}  // namespace adapt::api
