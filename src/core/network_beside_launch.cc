#include "core/network_beside_launch.h"

#include <chrono>

#include "base/fault_point.h"
#include "base/ignore_error.h"

namespace adapt::core {

NetworkBesideLaunch::NetworkBesideLaunch(net::NetworkManager& network, std::string id,
                                         store::NetworkConfig config)
    // Either policy: where no thread can be had, Get() attaches on the caller's.
    : attached_(std::async(std::launch::async | std::launch::deferred,
                           [&network, id = std::move(id),
                            config = std::move(config)]() -> Result<net::Attachment> {
                             auto attached = network.Attach(id, config);
                             if (!attached.ok()) {
                               IgnoreError(network.Detach(id),
                                           "undoing a failed attach, whose error is reported");
                               return attached;
                             }
                             ADAPT_FAULT_POINT("sandbox.provision.after_network");
                             return attached;
                           })
                    .share()) {}

NetworkBesideLaunch::~NetworkBesideLaunch() { Wait(); }

void NetworkBesideLaunch::Wait() const {
  // A deferred attach that nobody asked for is not begun now.
  if (attached_.valid() &&
      attached_.wait_for(std::chrono::seconds(0)) != std::future_status::deferred)
    attached_.wait();
}

Result<net::Attachment> NetworkBesideLaunch::Get() const { return attached_.get(); }

}  // namespace adapt::core
