// AppService's removal of replicas: forgetting one (its row and what supervision knows of it)
// is quick and done under app_mu_; deleting its sandbox takes up to seconds and is done after
// app_mu_ is released, so that one app's removals never hold up another app's deploy, scale or
// reconcile. A rollout's old replicas drain first.
#include <spdlog/spdlog.h>

#include "base/ignore_error.h"
#include "core/app_service.h"

namespace adapt::core {

void AppService::RemoveReplica(const store::AppReplicaRecord& replica) {
  ForgetReplica(replica);
  DeleteReplicaSandboxes({replica});
}

void AppService::ForgetReplica(const store::AppReplicaRecord& replica) {
  IgnoreError(store_.DeleteAppReplica(replica.sandbox_id), "the reconciler finds it again");
  std::lock_guard lock(mu_);
  open_.erase(replica.sandbox_id);
  counted_.erase(replica.sandbox_id);
  next_check_.erase(replica.sandbox_id);
}

void AppService::DeleteReplicaSandboxes(const std::vector<store::AppReplicaRecord>& replicas) {
  for (const auto& replica : replicas) {
    Principal who;
    who.org_id = replica.org_id;
    auto deleted = sandboxes_.Delete(who, replica.sandbox_id);
    if (!deleted.ok() && deleted.status().code() != Code::kNotFound)
      spdlog::warn("app {}: deleting replica {}: {}", replica.app_id, replica.sandbox_id,
                   deleted.status().message());
  }
}

void AppService::DrainThenRemove(const std::vector<store::AppReplicaRecord>& old) {
  // Long enough for the requests of an ordinary web app; a WebSocket is cut at the end.
  constexpr auto kDrainLimit = std::chrono::seconds(10);
  const auto deadline = std::chrono::steady_clock::now() + kDrainLimit;
  {
    std::unique_lock lock(mu_);
    // A request routed just before the state changed connects a moment later.
    changed_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
    for (;;) {
      bool open = false;
      for (const auto& r : old)
        if (auto it = open_.find(r.sandbox_id); it != open_.end() && it->second->load() > 0)
          open = true;
      if (!open || stopping_ || std::chrono::steady_clock::now() >= deadline) break;
      changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
  }
  {
    std::lock_guard lock(app_mu_);
    for (const auto& r : old) ForgetReplica(r);
  }
  DeleteReplicaSandboxes(old);
}

}  // namespace adapt::core
