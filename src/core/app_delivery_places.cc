// AppService's delivery places: a replica's delivery (Deliver) holds a thread of deliveries_
// for up to its sandbox's start plus its release's readiness timeout, so each organization
// runs at most kMaxAppDeliveriesPerOrg at once and queues the rest, holding no thread, in the
// order its replicas started. Another organization's replicas are then never kept waiting for
// a thread by this one's slow starts.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "core/app_service.h"

namespace adapt::core {

void AppService::PostDelivery(const store::AppReplicaRecord& replica) {
  {
    std::lock_guard lock(mu_);
    size_t& running = delivering_per_org_[replica.org_id];
    if (running >= kMaxAppDeliveriesPerOrg) {
      queued_deliveries_[replica.org_id].push_back(replica);
      return;
    }
    ++running;
  }
  RunDelivery(replica);
}

void AppService::RunDelivery(const store::AppReplicaRecord& replica) {
  boost::asio::post(deliveries_, Guarded(
                                     "app " + replica.app_id + ": replica " + replica.sandbox_id,
                                     [this, replica] {
                                       Deliver(replica);
                                       DeliveryEnded(replica.org_id);
                                     },
                                     [this, replica](const std::string& error) {
                                       EndDelivery(replica, "delivering its release: " + error);
                                       DeliveryEnded(replica.org_id);
                                     }));
}

void AppService::DeliveryEnded(const std::string& org_id) {
  std::optional<store::AppReplicaRecord> next;
  {
    std::lock_guard lock(mu_);
    auto queued = queued_deliveries_.find(org_id);
    if (queued != queued_deliveries_.end() && !queued->second.empty()) {
      next = std::move(queued->second.front());
      queued->second.pop_front();
      if (queued->second.empty()) queued_deliveries_.erase(queued);
    } else if (auto running = delivering_per_org_.find(org_id);
               running != delivering_per_org_.end() && --running->second == 0) {
      delivering_per_org_.erase(running);
    }
  }
  // The place passes to the next one: the organization's count stays as it was.
  if (next) RunDelivery(*next);
}

}  // namespace adapt::core
