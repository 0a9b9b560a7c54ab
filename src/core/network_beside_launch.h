// NetworkBesideLaunch: a sandbox's network, attached on a thread of its own while the runtime
// makes the sandbox's root filesystem. Neither needs the other, and one after the other they
// were about 50 ms of a create's 300 here (bench/README.md, create_latency).
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "net/network_manager.h"
#include "runtime/runtime.h"
#include "store/sandbox_config.h"

namespace adapt::core {

class NetworkBesideLaunch {
 public:
  // Starts attaching sandbox `id`'s network under `config`.
  NetworkBesideLaunch(net::NetworkManager& network, std::string id, store::NetworkConfig config);
  // Waits: nothing is still attaching once the owner goes on to release the sandbox.
  ~NetworkBesideLaunch();
  NetworkBesideLaunch(const NetworkBesideLaunch&) = delete;
  NetworkBesideLaunch& operator=(const NetworkBesideLaunch&) = delete;

  // Waits for the attach; the same answer at every call. A failed attach was undone.
  Result<net::Attachment> Get() const;
  // Waits for an attach that was begun.
  void Wait() const;

 private:
  std::shared_future<Result<net::Attachment>> attached_;
};

// What the network (and the database variables that name its gateway) adds to a spec.
struct NetworkedSpec {
  std::string netns_path;
  std::string resolv_conf;
  std::optional<runtime::ProcessSpec> process;  // the startup, planned again with them
};

// A launch request, with the network that is being attached beside it.
struct PreparedLaunch {
  runtime::LaunchRequest request;
  std::shared_ptr<NetworkBesideLaunch> network;  // none without a network (egress "none")
  // Before releasing the sandbox after a failed launch: the release removes the network,
  // which must be there (or have failed) by then.
  void WaitForNetwork() const {
    if (network) network->Wait();
  }
};

}  // namespace adapt::core
