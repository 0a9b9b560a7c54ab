// Endpoints: public HTTP(S) routes to a port of a running sandbox with a network (seed 001:
// "Use an endpoint to receive HTTP or WebSocket traffic after the sandbox starts"). Each gets
// a random hostname under the ingress domain; the ingress listener asks Route() on every
// connection, so a removed endpoint or an ended sandbox is a 404 at once.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/auth.h"
#include "core/sandbox_endpoint.h"
#include "net/ingress.h"
#include "net/network_manager.h"
#include "store/store.h"

namespace adapt::core {

struct EndpointOptions {
  std::string domain = "adapt.localhost";  // hostnames are <random>.<domain>
  uint16_t http_port = 0;                  // for the URLs shown (the ingress's ports)
  uint16_t https_port = 0;
};

class EndpointService {
 public:
  EndpointService(store::Store& store, net::NetworkManager& network, EndpointOptions options);
  // Called with a hostname whose route went away (to close its open connections).
  void OnRemoved(std::function<void(const std::string&)> fn) { on_removed_ = std::move(fn); }
  void SetPorts(uint16_t http_port, uint16_t https_port);

  // POST {port}: 404 unknown sandbox, 409 when it is not running or has egress "none".
  Result<nlohmann::json> Create(const Principal& who, const std::string& sandbox_id,
                                const nlohmann::json& body);
  Result<nlohmann::json> List(const Principal& who, const std::string& sandbox_id);
  Status Delete(const Principal& who, const std::string& sandbox_id, const std::string& id);
  // Removes every route to the sandbox (it ended or is being deleted).
  void RemoveAll(const std::string& sandbox_id);
  // The ingress's lookup.
  std::optional<net::IngressBackend> Route(const std::string& host);
  // The sandbox view's `endpoints`.
  std::vector<SandboxEndpoint> EndpointsOf(const std::string& org_id,
                                           const std::string& sandbox_id);

 private:
  nlohmann::json View(const store::EndpointRecord& e) const;
  SandboxEndpoint Typed(const store::EndpointRecord& e) const;

  store::Store& store_;
  net::NetworkManager& network_;
  EndpointOptions options_;
  std::function<void(const std::string&)> on_removed_;
};

}  // namespace adapt::core
