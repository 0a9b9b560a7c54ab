// NetworkStore: sandboxes' network attachments (net/). One domain of Store (store/store.h): a
// service that needs only this domain depends on this interface, and a test can give it a
// MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class NetworkStore {
 public:
  virtual ~NetworkStore() = default;

  // Records a sandbox's network attachment; Conflict when its slot or sandbox already has one.
  virtual Status PutNetwork(const NetworkRecord& network) = 0;
  // Every recorded attachment, by slot.
  virtual Result<std::vector<NetworkRecord>> ListNetworks() = 0;
  // The attachment in `slot` (an indexed read: the database proxy asks at each session);
  // NotFound when the slot is free.
  virtual Result<NetworkRecord> GetNetworkBySlot(int64_t slot) = 0;
  // Forgets the sandbox's attachment; no error when there is none.
  virtual Status DeleteNetwork(const std::string& sandbox_id) = 0;
  // Replaces the egress policy of the sandbox's attachment (its slot and addresses stay);
  // NotFound when it has none.
  virtual Status UpdateNetworkPolicy(const std::string& sandbox_id,
                                     const NetworkPolicyRecord& policy) = 0;
};

}  // namespace adapt::store
