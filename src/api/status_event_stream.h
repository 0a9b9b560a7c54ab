// StatusEventStream: one Server-Sent Events stream of an organization's events (a sandbox's
// status changes only, when given a sandbox id): `event: status`, and on the organization's
// stream `event: app`, `event: run` and `event: alert` (see event_routes.cc). Events come from
// the store, after the last one sent, so a client that reconnects with Last-Event-ID misses
// nothing; the bus only says when to look. An idle stream carries a comment every
// kHeartbeatInterval, so that clients and proxies can tell a quiet stream from a dead
// connection. A pass over the store that throws ends the stream (the client reconnects from
// the last event it got) instead of leaving it open and silent.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "api/http_types.h"
#include "core/event_bus.h"
#include "store/store.h"

namespace adapt::api {

class StatusEventStream : public ResponseStream,
                          public std::enable_shared_from_this<StatusEventStream> {
 public:
  static constexpr std::chrono::seconds kHeartbeatInterval{15};

  // Sends the events of `org_id` (of `sandbox_id` alone when not empty) after seq `after`;
  // `reset_reason`, when not empty, goes first as an `event: reset` (event_resume.h).
  StatusEventStream(store::Store& store, core::EventBus& bus, boost::asio::thread_pool& workers,
                    std::string org_id, std::string sandbox_id, int64_t after,
                    std::string reset_reason = "");

  // Before Start: the heartbeat's period (kHeartbeatInterval unless a test shortens it).
  void SetHeartbeatInterval(std::chrono::milliseconds interval) { heartbeat_interval_ = interval; }
  // Before Start: asked before events are sent (at most once a second) and at each heartbeat;
  // false ends the stream, so a revoked key or ended session stops seeing events.
  void SetStillSignedIn(std::function<bool()> check) { still_signed_in_ = std::move(check); }

  void Start(std::shared_ptr<StreamSink> sink) override;
  // Runs on an I/O thread: takes only the short sink lock, never the pump's.
  void Stop() override;
  // Ends the response after what is already queued: what a pump that threw does.
  void End();

 private:
  // Sends every event after the last one sent. Runs on a worker; one at a time.
  void Pump();
  // The timer lives on the workers; its handler holds only a weak link, so a stopped stream
  // is freed with its timer (which cancels the wait) and nothing is sent after Stop.
  void ArmHeartbeat();
  bool SendHeartbeat();
  // Under pump_mu_. `force` asks now; otherwise at most once a second.
  bool StillSignedIn(bool force);

  store::Store& store_;
  core::EventBus& bus_;
  boost::asio::thread_pool& workers_;
  boost::asio::steady_timer heartbeat_;  // touched by Start and then only by its own handler
  std::chrono::milliseconds heartbeat_interval_ = kHeartbeatInterval;
  std::string org_id_;
  std::string sandbox_id_;
  std::mutex pump_mu_;  // one Pump at a time; guards last_seq_ and reset_reason_
  std::string reset_reason_;
  std::function<bool()> still_signed_in_;
  std::chrono::steady_clock::time_point signed_in_checked_;  // guarded by pump_mu_
  std::mutex sink_mu_;
  std::shared_ptr<StreamSink> sink_;
  int64_t last_seq_;
  uint64_t token_ = 0;
};

}  // namespace adapt::api
