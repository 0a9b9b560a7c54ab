#include "api/status_event_stream.h"

#include <boost/asio/post.hpp>
#include <utility>

#include "api/account_json.h"
#include "base/background_work.h"
#include "base/time.h"

namespace adapt::api {
namespace {

using nlohmann::json;

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

std::string Frame(int64_t seq, const char* kind, const json& data) {
  return "id: " + std::to_string(seq) + "\nevent: " + kind +
         "\ndata: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

// A pump that threw ends its stream.
auto EndOnFault(std::shared_ptr<StatusEventStream> stream) {
  return [stream = std::move(stream)](const std::string&) { stream->End(); };
}

}  // namespace

StatusEventStream::StatusEventStream(store::Store& store, core::EventBus& bus,
                                     boost::asio::thread_pool& workers, std::string org_id,
                                     std::string sandbox_id, int64_t after,
                                     std::string reset_reason)
    : store_(store),
      bus_(bus),
      workers_(workers),
      heartbeat_(workers),
      org_id_(std::move(org_id)),
      sandbox_id_(std::move(sandbox_id)),
      reset_reason_(std::move(reset_reason)),
      last_seq_(after) {}

void StatusEventStream::Start(std::shared_ptr<StreamSink> sink) {
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
      boost::asio::post(workers, Guarded(
                                     "event stream", [self] { self->Pump(); }, EndOnFault(self)));
  });
  auto self = shared_from_this();
  boost::asio::post(workers_, Guarded(
                                  "event stream", [self] { self->Pump(); }, EndOnFault(self)));
  ArmHeartbeat();
}

void StatusEventStream::Stop() {
  bus_.Unsubscribe(token_);
  std::lock_guard lock(sink_mu_);
  sink_.reset();
}

void StatusEventStream::End() {
  std::lock_guard lock(sink_mu_);
  if (sink_) sink_->Close();
}

void StatusEventStream::Pump() {
  std::lock_guard pumping(pump_mu_);
  std::shared_ptr<StreamSink> sink;
  {
    std::lock_guard lock(sink_mu_);
    sink = sink_;
  }
  if (!sink) return;
  if (!StillSignedIn(false)) {
    sink->Close();
    return;
  }
  if (!reset_reason_.empty()) {
    // First, before any event: the client's resume point is not kept (event_resume.h).
    if (!sink->Send(
            Frame(last_seq_, "reset", {{"reason", reset_reason_}, {"lastEventId", last_seq_}})))
      return;
    reset_reason_.clear();
  }
  for (;;) {
    auto events = store_.ListEvents(org_id_, sandbox_id_, last_seq_, 100);
    if (!events.ok() || events->empty()) return;
    for (const auto& e : *events) {
      json data = {{"sandboxId", e.sandbox_id}, {"status", e.status}, {"at", FormatRfc3339(e.at)}};
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
      if (!sink->Send(Frame(e.seq, kind, data))) return;
      last_seq_ = e.seq;
    }
  }
}

void StatusEventStream::ArmHeartbeat() {
  heartbeat_.expires_after(heartbeat_interval_);
  std::weak_ptr<StatusEventStream> weak = shared_from_this();
  heartbeat_.async_wait([weak](const boost::system::error_code& error) {
    if (error) return;
    auto self = weak.lock();
    if (!self) return;
    // A heartbeat that throws ends the stream, as a pump that throws does: the stream would
    // otherwise stay open with no heartbeat to tell the client it is alive.
    RunGuarded(
        "event stream heartbeat",
        [&] {
          if (self->SendHeartbeat()) self->ArmHeartbeat();
        },
        EndOnFault(self));
  });
}

bool StatusEventStream::SendHeartbeat() {
  std::lock_guard pumping(pump_mu_);  // never between an event's lines
  std::shared_ptr<StreamSink> sink;
  {
    std::lock_guard lock(sink_mu_);
    sink = sink_;
  }
  if (!sink) return false;
  if (!StillSignedIn(true)) {
    sink->Close();
    return false;
  }
  return sink->Send(": heartbeat\n\n");
}

bool StatusEventStream::StillSignedIn(bool force) {
  if (!still_signed_in_) return true;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - signed_in_checked_ < std::chrono::seconds(1)) return true;
  signed_in_checked_ = now;
  return still_signed_in_();
}

}  // namespace adapt::api
