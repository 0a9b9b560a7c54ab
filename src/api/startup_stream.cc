// GET /v1/sandboxes/{id}/startup/stream: a sandbox's startup output as Server-Sent Events,
// while it is produced (core/startup_output.h). It sends what was printed so far, then what
// is printed as it comes, and ends with one "result" event once the sandbox no longer runs:
//   event: stdout / stderr    data: {"data": "<text appended>"}
//   event: reset              data: {"stdout": "...", "stderr": "..."}   (older output was
//                             dropped: these replace everything sent before)
//   event: result             data: <the sandbox, as GET /v1/sandboxes/{id} answers>
// 409 for an interactive sandbox (no startup command); another organization's id is 404.
#include <atomic>
#include <thread>

#include "api/errors.h"
#include "api/routes.h"
#include "api/sandbox_json.h"
#include "api/stream_threads.h"

namespace adapt::api {
namespace {

using nlohmann::json;

std::string StartupEvent(const char* name, const json& data) {
  return std::string("event: ") + name +
         "\ndata: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

class StartupOutputStream : public ResponseStream,
                            public std::enable_shared_from_this<StartupOutputStream> {
 public:
  explicit StartupOutputStream(core::StartupOutputFollower follower)
      : follower_(std::move(follower)) {}

  void Start(std::shared_ptr<StreamSink> sink) override {
    // A thread of its own, as a command's stream: a long startup must not hold a worker.
    StartStreamThread([self = shared_from_this(), sink] { self->Pump(*sink); });
  }

  void Stop() override { stopped_ = true; }

 private:
  void Pump(StreamSink& sink) {
    int quiet = 0;
    while (!stopped_) {
      auto update = follower_.Next();
      if (!update.ok()) break;  // deleted for good meanwhile: nothing more to say
      bool ok = true;
      if (update->replaced) {
        ok = sink.Send(StartupEvent(
            "reset", {{"stdout", update->stdout_text}, {"stderr", update->stderr_text}}));
      } else {
        if (!update->stdout_text.empty())
          ok = sink.Send(StartupEvent("stdout", {{"data", update->stdout_text}}));
        if (ok && !update->stderr_text.empty())
          ok = sink.Send(StartupEvent("stderr", {{"data", update->stderr_text}}));
      }
      bool said = update->replaced || !update->stdout_text.empty() || !update->stderr_text.empty();
      quiet = said ? 0 : quiet + 1;
      // A comment line now and then finds out when the client has gone.
      if (ok && quiet >= 4) {
        ok = sink.Send(": keepalive\n\n");
        quiet = 0;
      }
      if (!ok) return;
      if (update->ended) {
        sink.Send(StartupEvent("result", SandboxToJson(*update->ended)));
        break;
      }
      std::this_thread::sleep_for(core::StartupOutputFollower::kInterval);
    }
    sink.Close();
  }

  core::StartupOutputFollower follower_;
  std::atomic<bool> stopped_{false};
};

}  // namespace

void AddStartupStreamRoutes(Router& router, core::SandboxService& sandboxes) {
  router.Add("GET", "/v1/sandboxes/{id}/startup/stream",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto follower = sandboxes.FollowStartup(who, p.at("id"));
               if (!follower.ok()) return ErrorResponse(follower.status());
               HttpResponse r;
               r.content_type = "text/event-stream";
               r.stream = std::make_shared<StartupOutputStream>(std::move(*follower));
               return r;
             });
}

}  // namespace adapt::api
