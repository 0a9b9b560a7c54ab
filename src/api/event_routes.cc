// Server-Sent Events of sandbox status changes (`event: status`) and, on the organization's
// stream, deployed apps' events (`event: app`), runs' status changes (`event: run`: jobs' and
// automations' runs) and its account alerts (`event: alert`: 80% / 100% of its credits used or
// of a plan limit, api/account_json.h). Events come from the store, so a client that reconnects
// with Last-Event-ID misses nothing; the bus only says when to look. An idle stream carries a
// comment every kHeartbeatInterval, so that clients and proxies can tell a quiet stream from a
// dead connection.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <mutex>

#include "api/account_json.h"
#include "api/errors.h"
#include "api/event_resume.h"
#include "api/routes.h"
#include "base/background_work.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

constexpr std::chrono::seconds kHeartbeatInterval{15};

// A run's frame: whose run it is (automationId or jobId), where it ran, and once it ended, its
// exit code (null when it ended without one).
json RunEventData(const store::EventRecord& e) {
  json data = {{"runId", e.run_id}};
  if (!e.automation_id.empty()) data["automationId"] = e.automation_id;
  if (!e.job_id.empty()) data["jobId"] = e.job_id;
  data["status"] = e.status;
  data["attempt"] = e.attempt;
  data["sandboxId"] = e.run_sandbox_id.empty() ? json(nullptr) : json(e.run_sandbox_id);
  bool ended = e.status != "queued" && e.status != "starting" && e.status != "running";
  if (ended) data["exitCode"] = e.exit_code ? json(*e.exit_code) : json(nullptr);
  data["at"] = FormatRfc3339(e.at);
  return data;
}

class StatusEventStream : public ResponseStream,
                          public std::enable_shared_from_this<StatusEventStream> {
 public:
  StatusEventStream(store::Store& store, core::EventBus& bus, boost::asio::thread_pool& workers,
                    std::string org_id, std::string sandbox_id, int64_t after,
                    std::string reset_reason = "")
      : store_(store),
        bus_(bus),
        workers_(workers),
        heartbeat_(workers),
        org_id_(std::move(org_id)),
        sandbox_id_(std::move(sandbox_id)),
        reset_reason_(std::move(reset_reason)),
        last_seq_(after) {}

  void Start(std::shared_ptr<StreamSink> sink) override {
    {
      std::lock_guard lock(sink_mu_);
      sink_ = std::move(sink);
      // A comment at once: a client that lists after the stream opens (list, then watch)
      // knows when to list without waiting for the first event or heartbeat.
      sink_->Send(": open\n\n");
    }
    std::weak_ptr<StatusEventStream> weak = shared_from_this();
    token_ = bus_.Subscribe([weak, &workers = workers_, id = sandbox_id_,
                             org = org_id_](const core::Change& c) {
      using Kind = core::Change::Kind;
      bool wanted = c.kind == Kind::kSandboxStatus ? id.empty() || c.id == id
                    : c.kind == Kind::kAccountAlert
                        ? id.empty() && c.id == org
                        : (c.kind == Kind::kAppEvent || c.kind == Kind::kRunStatus) && id.empty();
      if (!wanted) return;
      if (auto self = weak.lock())
        boost::asio::post(workers, Guarded("event stream", [self] { self->Pump(); }));
    });
    boost::asio::post(workers_,
                      Guarded("event stream", [self = shared_from_this()] { self->Pump(); }));
    ArmHeartbeat();
  }

  // Runs on an I/O thread: takes only the short sink lock, never the pump's.
  void Stop() override {
    bus_.Unsubscribe(token_);
    std::lock_guard lock(sink_mu_);
    sink_.reset();
  }

 private:
  // Sends every event after the last one sent. Runs on a worker; one at a time.
  void Pump() {
    std::lock_guard pumping(pump_mu_);
    std::shared_ptr<StreamSink> sink;
    {
      std::lock_guard lock(sink_mu_);
      sink = sink_;
    }
    if (!sink) return;
    if (!reset_reason_.empty()) {
      // First, before any event: the client's resume point is not kept (event_resume.h).
      json data = {{"reason", reset_reason_}, {"lastEventId", last_seq_}};
      if (!sink->Send("id: " + std::to_string(last_seq_) + "\nevent: reset\ndata: " +
                      data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n"))
        return;
      reset_reason_.clear();
    }
    for (;;) {
      auto events = store_.ListEvents(org_id_, sandbox_id_, last_seq_, 100);
      if (!events.ok() || events->empty()) return;
      for (const auto& e : *events) {
        json data = {
            {"sandboxId", e.sandbox_id}, {"status", e.status}, {"at", FormatRfc3339(e.at)}};
        const char* kind = "status";
        if (e.alert) {
          kind = "alert";
          data = AlertEventToJson(e);
        } else if (!e.run_id.empty()) {
          kind = "run";
          data = RunEventData(e);
        } else if (!e.app_id.empty()) {
          kind = "app";
          data = {{"appId", e.app_id},
                  {"type", e.status},
                  {"replicaId", e.replica_id.empty() ? json(nullptr) : json(e.replica_id)},
                  {"message", e.message},
                  {"at", FormatRfc3339(e.at)}};
        }
        std::string frame = "id: " + std::to_string(e.seq) + "\nevent: " + kind + "\ndata: " +
                            data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                            "\n\n";
        if (!sink->Send(std::move(frame))) return;
        last_seq_ = e.seq;
      }
    }
  }

  // The timer lives on the workers; its handler holds only a weak link, so a stopped stream
  // is freed with its timer (which cancels the wait) and nothing is sent after Stop.
  void ArmHeartbeat() {
    heartbeat_.expires_after(kHeartbeatInterval);
    std::weak_ptr<StatusEventStream> weak = shared_from_this();
    heartbeat_.async_wait([weak](const boost::system::error_code& error) {
      if (error) return;
      RunGuarded("event stream heartbeat", [&] {
        auto self = weak.lock();
        if (!self || !self->SendHeartbeat()) return;
        self->ArmHeartbeat();
      });
    });
  }

  bool SendHeartbeat() {
    std::lock_guard pumping(pump_mu_);  // never between an event's lines
    std::shared_ptr<StreamSink> sink;
    {
      std::lock_guard lock(sink_mu_);
      sink = sink_;
    }
    return sink && sink->Send(": heartbeat\n\n");
  }

  store::Store& store_;
  core::EventBus& bus_;
  boost::asio::thread_pool& workers_;
  boost::asio::steady_timer heartbeat_;  // touched by Start and then only by its own handler
  std::string org_id_;
  std::string sandbox_id_;
  std::mutex pump_mu_;  // one Pump at a time; guards last_seq_ and reset_reason_
  std::string reset_reason_;
  std::mutex sink_mu_;
  std::shared_ptr<StreamSink> sink_;
  int64_t last_seq_;
  uint64_t token_ = 0;
};

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
               return Stream(std::make_shared<StatusEventStream>(store, bus, workers, who.org_id,
                                                                 "", resume.after, resume.reason));
             });
  router.Add("GET", "/v1/sandboxes/{id}/events",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               // The sandbox must be the caller's: another organization's id is a 404.
               auto sandbox = sandboxes.Get(who, p.at("id"));
               if (!sandbox.ok()) return ErrorResponse(sandbox.status());
               auto after = LastEventId(req, 0);
               if (!after.ok()) return ErrorResponse(after.status());
               return Stream(std::make_shared<StatusEventStream>(store, bus, workers, who.org_id,
                                                                 p.at("id"), *after));
             });
}

}  // namespace adapt::api
