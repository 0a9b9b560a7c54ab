// AppService's readiness checks of replicas that were ready: every reconcile_every, each one's
// check runs again; unready_after failures in a row make it "unready" (the ingress skips it)
// until a check passes. One whose sandbox ends is replaced by the reconcile as any other.
#include <spdlog/spdlog.h>

#include "base/ignore_error.h"
#include "core/app_service.h"
#include "net/port_probe.h"

namespace adapt::core {

void AppService::RecheckReplicas() {
  auto replicas = store_.ListAppReplicas("");
  if (!replicas.ok()) return;
  for (const auto& r : *replicas) {
    if (r.state != "ready" && r.state != "unready") continue;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    auto release = store_.GetAppRelease(r.app_id, r.release_id);
    if (!release.ok()) continue;
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
    const std::string check =
        release->readiness_path.empty()
            ? "its port " + std::to_string(port)
            : "GET " + release->readiness_path + " on port " + std::to_string(port);
    std::string state = r.state;
    int failures = 0;
    {
      std::lock_guard lock(mu_);
      if (failure.empty()) {
        check_failures_.erase(r.sandbox_id);
        state = "ready";
      } else {
        auto& f = check_failures_[r.sandbox_id];
        failures = ++f.first;
        f.second = check + " " + failure;
        if (failures >= options_.unready_after) state = "unready";
      }
    }
    if (state == r.state) continue;
    {
      // Only while the replica is still the app's as it was (a scale or a rollout may have
      // removed it meanwhile: writing it again would bring it back).
      std::lock_guard lock(app_mu_);
      bool same = false;
      if (auto now = store_.ListAppReplicas(r.app_id); now.ok())
        for (const auto& x : *now)
          same = same || (x.sandbox_id == r.sandbox_id && x.state == r.state);
      if (!same) continue;
      store::AppReplicaRecord updated = r;
      updated.state = state;
      if (Status st = store_.PutAppReplica(updated); !st.ok()) {
        spdlog::warn("app {}: replica {}: {}", r.app_id, r.sandbox_id, st.message());
        continue;
      }
    }
    if (state == "ready") {
      spdlog::info("app {}: replica {} passes its readiness check again", r.app_id, r.sandbox_id);
      Emit(r.org_id, r.app_id, "replica.ready", r.sandbox_id,
           "release " + r.release_id + ": " + check + " passes again");
    } else {
      const std::string why = check + " " + failure + " (" + std::to_string(failures) +
                              " checks in a row); it takes no traffic until a check passes";
      spdlog::info("app {}: replica {} is unready: {}", r.app_id, r.sandbox_id, why);
      Emit(r.org_id, r.app_id, "replica.unready", r.sandbox_id, why);
    }
  }
}

}  // namespace adapt::core
