// VolumeStore: persistent storage volumes (/v1/storage). One domain of Store (store/store.h): a
// service that needs only this domain depends on this interface, and a test can give it a
// MemoryStore. Every method is one transaction; implementations are thread-safe.
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
class VolumeStore : public virtual IdempotencyStore {
 public:
  virtual ~VolumeStore() = default;

  // Persistent storage volumes. PutVolume inserts or replaces by id; Conflict when the
  // organization has another volume of that name.
  // With `max_gib`, a volume not stored yet is refused (kResourceExhausted, nothing written)
  // when the organization's volumes would then allocate more, counted in the same transaction.
  virtual Status PutVolume(const VolumeRecord& volume,
                           std::optional<int64_t> max_gib = std::nullopt) = 0;
  // NotFound unless the organization has a volume of this name.
  virtual Result<VolumeRecord> GetVolumeByName(const std::string& org_id,
                                               const std::string& name) = 0;
  // Oldest first; an empty org_id lists every organization's.
  virtual Result<std::vector<VolumeRecord>> ListVolumes(const std::string& org_id) = 0;
  // Ids of the organization's sandboxes that mount volume `name` and have not ended
  // (every status but completed, failed and deleted), oldest first.
  virtual Result<std::vector<SandboxRecord>> ListVolumeAttachments(const std::string& org_id,
                                                                   const std::string& name) = 0;
  // Marks the volume "deleting" when it is "ready" and no sandbox is attached, in one
  // transaction (Conflict otherwise, naming the reason).
  virtual Status BeginDeleteVolume(const std::string& org_id, const std::string& id) = 0;
  virtual Status DeleteVolume(const std::string& id) = 0;
};

}  // namespace adapt::store
