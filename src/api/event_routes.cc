// Server-Sent Events of sandbox status changes (`event: status`) and, on the organization's
// stream, deployed apps' events (`event: app`). Events come from the store, so a client
// that reconnects with Last-Event-ID misses nothing; the bus only says when to look.
#include <boost/asio/post.hpp>
#include <mutex>

#include "api/errors.h"
#include "api/routes.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

class StatusEventStream : public ResponseStream,
                          public std::enable_shared_from_this<StatusEventStream> {
 public:
  StatusEventStream(store::Store& store, core::EventBus& bus, boost::asio::thread_pool& workers,
                    std::string org_id, std::string sandbox_id, int64_t after)
      : store_(store),
        bus_(bus),
        workers_(workers),
        org_id_(std::move(org_id)),
        sandbox_id_(std::move(sandbox_id)),
        last_seq_(after) {}

  void Start(std::shared_ptr<StreamSink> sink) override {
    {
      std::lock_guard lock(sink_mu_);
      sink_ = std::move(sink);
    }
    std::weak_ptr<StatusEventStream> weak = shared_from_this();
    token_ = bus_.Subscribe([weak, &workers = workers_, id = sandbox_id_](const core::Change& c) {
      bool wanted = c.kind == core::Change::Kind::kSandboxStatus
                        ? id.empty() || c.id == id
                        : c.kind == core::Change::Kind::kAppEvent && id.empty();
      if (!wanted) return;
      if (auto self = weak.lock()) boost::asio::post(workers, [self] { self->Pump(); });
    });
    boost::asio::post(workers_, [self = shared_from_this()] { self->Pump(); });
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
    for (;;) {
      auto events = store_.ListEvents(org_id_, sandbox_id_, last_seq_, 100);
      if (!events.ok() || events->empty()) return;
      for (const auto& e : *events) {
        json data = {
            {"sandboxId", e.sandbox_id}, {"status", e.status}, {"at", FormatRfc3339(e.at)}};
        const char* kind = "status";
        if (!e.app_id.empty()) {
          kind = "app";
          data = {{"appId", e.app_id},
                  {"type", e.status},
                  {"replicaId", e.replica_id.empty() ? json(nullptr) : json(e.replica_id)},
                  {"message", e.message},
                  {"at", FormatRfc3339(e.at)}};
        }
        std::string frame =
            "id: " + std::to_string(e.seq) + "\nevent: " + kind + "\ndata: " + data.dump() + "\n\n";
        if (!sink->Send(std::move(frame))) return;
        last_seq_ = e.seq;
      }
    }
  }

  store::Store& store_;
  core::EventBus& bus_;
  boost::asio::thread_pool& workers_;
  std::string org_id_;
  std::string sandbox_id_;
  std::mutex pump_mu_;  // one Pump at a time; guards last_seq_
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
               auto after = LastEventId(req, *latest);
               if (!after.ok()) return ErrorResponse(after.status());
               return Stream(std::make_shared<StatusEventStream>(store, bus, workers, who.org_id,
                                                                 "", *after));
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
