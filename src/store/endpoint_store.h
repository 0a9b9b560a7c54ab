// EndpointStore: endpoints: public routes to sandbox ports (ingress). One domain of Store
// (store/store.h): a service that needs only this domain depends on this interface, and a test can
// give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/idempotency_store.h"
#include "store/records.h"

namespace adapt::store {

// Its creates take an Idempotency-Key: the idempotency table is reachable from it.
class EndpointStore : public virtual IdempotencyStore {
 public:
  virtual ~EndpointStore() = default;

  // With `max_endpoints`, refused (kResourceExhausted, nothing written) when the organization
  // already has that many, counted in the same transaction. Conflict, nothing written, unless
  // its sandbox is running or provisioning in that transaction: a sandbox that ends removes
  // its endpoints after its status changed, so none made while it ends is left behind.
  virtual Status PutEndpoint(const EndpointRecord& endpoint,
                             std::optional<int64_t> max_endpoints = std::nullopt) = 0;
  // The organization's endpoints of `sandbox_id` (all of them when empty), oldest first.
  virtual Result<std::vector<EndpointRecord>> ListEndpoints(const std::string& org_id,
                                                            const std::string& sandbox_id) = 0;
  // NotFound when no endpoint has this hostname.
  virtual Result<EndpointRecord> FindEndpointByHostname(const std::string& hostname) = 0;
  // NotFound unless the organization has this endpoint.
  virtual Status DeleteEndpoint(const std::string& org_id, const std::string& id) = 0;
  // Removes every endpoint of the sandbox; returns their hostnames.
  virtual Result<std::vector<std::string>> DeleteEndpointsOfSandbox(
      const std::string& sandbox_id) = 0;
};

}  // namespace adapt::store
