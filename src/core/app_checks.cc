// AppService's readiness checks of replicas that were ready: each one's check runs again every
// readiness period of its release; the release's threshold of failures in a row makes it
// "unready" (the ingress skips it) until a check passes. The failures in a row are kept on the
// replica's record (written when they change: a check that passes after one that passed writes
// nothing), so a restart goes on counting. One whose sandbox ends is replaced by the reconcile
// as any other.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/ignore_error.h"
#include "core/app_service.h"
#include "net/port_probe.h"

namespace adapt::core {

std::chrono::steady_clock::time_point AppService::RecheckReplicas() {
  using Clock = std::chrono::steady_clock;
  // With no check due sooner, the loop looks again at the reconcile's pace (a replica that
  // becomes ready wakes it, and its first check is then due one period later).
  auto next = Clock::now() + options_.reconcile_every;
  auto replicas = store_.ListAppReplicas("");
  if (!replicas.ok()) return next;
  for (const auto& r : *replicas) {
    if (r.state != "ready" && r.state != "unready") continue;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return next;
    }
    auto release = store_.GetAppRelease(r.app_id, r.release_id);
    if (!release.ok()) continue;
    const auto period = std::chrono::seconds(std::max(1, release->readiness_period_seconds));
    const int threshold = std::max(1, release->readiness_failure_threshold);
    {
      std::lock_guard lock(mu_);
      auto [due, _] = next_check_.try_emplace(r.sandbox_id, Clock::now() + period);
      if (Clock::now() < due->second) {
        next = std::min(next, due->second);
        continue;
      }
    }
    const auto port = static_cast<uint16_t>(release->port);
    const auto bound = std::chrono::milliseconds(1000);
    auto address = network_.AddressOf(r.sandbox_id);
    std::string failure;
    if (!address || address->empty()) {
      failure = "has no network address";
    } else if (release->readiness_path.empty()) {
      failure = net::PortAccepts(*address, port, bound) ? "" : "did not accept connections";
    } else {
      failure = net::HttpReadinessFailure(*address, port, release->readiness_path,
                                          *address + ":" + std::to_string(port), bound);
    }
    {
      // From the check's end; a replica removed meanwhile (RemoveReplica) is not brought back.
      std::lock_guard lock(mu_);
      if (auto due = next_check_.find(r.sandbox_id); due != next_check_.end()) {
        due->second = Clock::now() + period;
        next = std::min(next, due->second);
      }
    }
    const std::string check =
        release->readiness_path.empty()
            ? "its port " + std::to_string(port)
            : "GET " + release->readiness_path + " on port " + std::to_string(port);
    store::AppReplicaRecord updated = r;
    if (failure.empty()) {
      updated.state = "ready";
      updated.check_failures = 0;
      updated.check_failure.clear();
    } else {
      updated.check_failures = r.check_failures + 1;
      updated.check_failure = check + " " + failure;
      if (updated.check_failures >= threshold) updated.state = "unready";
    }
    if (updated.state == r.state && updated.check_failures == r.check_failures) continue;
    {
      // Only while the replica is still the app's as it was (a scale or a rollout may have
      // removed it meanwhile: writing it again would bring it back).
      std::lock_guard lock(app_mu_);
      bool same = false;
      if (auto now = store_.ListAppReplicas(r.app_id); now.ok())
        for (const auto& x : *now)
          same = same || (x.sandbox_id == r.sandbox_id && x.state == r.state &&
                          x.check_failures == r.check_failures);
      if (!same) continue;
      if (Status st = store_.PutAppReplica(updated); !st.ok()) {
        spdlog::warn("app {}: replica {}: {}", r.app_id, r.sandbox_id, st.message());
        continue;
      }
    }
    if (updated.state == r.state) continue;
    if (updated.state == "ready") {
      spdlog::info("app {}: replica {} passes its readiness check again", r.app_id, r.sandbox_id);
      Emit(r.org_id, r.app_id, "replica.ready", r.sandbox_id,
           "release " + r.release_id + ": " + check + " passes again");
    } else {
      const std::string why = updated.check_failure + " (" +
                              std::to_string(updated.check_failures) +
                              " checks in a row); it takes no traffic until a check passes";
      spdlog::info("app {}: replica {} is unready: {}", r.app_id, r.sandbox_id, why);
      Emit(r.org_id, r.app_id, "replica.unready", r.sandbox_id, why);
    }
  }
  return next;
}

}  // namespace adapt::core
