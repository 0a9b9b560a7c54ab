// Endpoints: public HTTP(S) routes to a port of a running sandbox with a network (seed 001:
// "Use an endpoint to receive HTTP or WebSocket traffic after the sandbox starts"). Each gets
// a random hostname under the ingress domain; the ingress listener asks Route() on every
// connection, so a removed endpoint or an ended sandbox is a 404 at once.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "core/account_service.h"
#include "core/auth.h"
#include "core/sandbox_activity.h"
#include "core/sandbox_endpoint.h"
#include "net/ingress.h"
#include "net/network_manager.h"
#include "store/endpoint_store.h"
#include "store/sandbox_store.h"

namespace adapt::core {

struct EndpointOptions {
  std::string domain = "adapt.localhost";  // hostnames are <random>.<domain>
  uint16_t http_port = 0;                  // for the URLs shown (the ingress's ports)
  uint16_t https_port = 0;
};

struct CreateEndpoint {
  int64_t port = 0;  // 1..65535 inside the sandbox
};

// Which routes of a sandbox to remove: the one with `id`, or every route to `port`.
struct RemoveEndpoints {
  std::string sandbox_id;
  std::optional<std::string> id;
  std::optional<int64_t> port;
};

class EndpointService {
 public:
  EndpointService(store::SandboxStore& sandboxes, store::EndpointStore& endpoints,
                  net::NetworkManager& network, EndpointOptions options);
  // Called with a hostname whose route went away (to close its open connections).
  void OnRemoved(std::function<void(const std::string&)> fn) { on_removed_ = std::move(fn); }
  void SetPorts(uint16_t http_port, uint16_t https_port);
  // Where Create finds the organization's plan limit on endpoints (checked in the transaction
  // that records one); without one, none applies.
  void set_account_service(AccountService* accounts) { accounts_ = accounts; }
  // Where a routed connection marks its sandbox used (idle_tracker.h). Set before serving.
  void set_activity(SandboxActivity* activity) { activity_ = activity; }

  // NotFound for an unknown sandbox, Conflict when it is not running or has egress "none".
  // With `idempotency` (scope "endpoint"): a key the organization already used answers the
  // endpoint it made (Conflict for another request); a new one is recorded with it.
  Result<Endpoint> Create(const Principal& who, const std::string& sandbox_id,
                          const CreateEndpoint& request,
                          const std::optional<store::IdempotencyKey>& idempotency = {});
  // The sandbox's routes; an empty `sandbox_id`: every route of the organization. Oldest first.
  Result<std::vector<Endpoint>> List(const Principal& who, const std::string& sandbox_id);
  // One newest-first page of them (API.md's lists); InvalidArgument for a bad limit or cursor.
  Result<Page<Endpoint>> List(const Principal& who, const std::string& sandbox_id,
                              const PageRequest& page);
  // NotFound when the sandbox or the route does not exist.
  Status Delete(const Principal& who, const std::string& sandbox_id, const std::string& id);
  // Removes the routes that match and returns their ids; none matching is no error (removing a
  // route that is already gone succeeds). InvalidArgument when neither id nor port is named.
  Result<std::vector<std::string>> Remove(const Principal& who, const RemoveEndpoints& request);
  // Removes every route to the sandbox (it ended or is being deleted).
  void RemoveAll(const std::string& sandbox_id);
  // The ingress's lookup.
  std::optional<net::IngressBackend> Route(const std::string& host);
  // The sandbox view's `endpoints`.
  std::vector<Endpoint> EndpointsOf(const std::string& org_id, const std::string& sandbox_id);

 private:
  Endpoint View(const store::EndpointRecord& e) const;
  // The endpoint an Idempotency-Key made: its view, or IdempotentObjectGone.
  Result<Endpoint> MadeEndpoint(const Principal& who, const std::string& sandbox_id,
                                const std::string& id);

  store::SandboxStore& sandboxes_;
  store::EndpointStore& endpoints_;
  AccountService* accounts_ = nullptr;
  SandboxActivity* activity_ = nullptr;
  net::NetworkManager& network_;
  EndpointOptions options_;
  std::function<void(const std::string&)> on_removed_;
};

}  // namespace adapt::core
