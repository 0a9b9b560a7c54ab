// PoolStore: warm pool members (core/warm_pool.h). One domain of Store (store/store.h): a service
// that needs only this domain depends on this interface, and a test can give it a MemoryStore.
// Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class PoolStore {
 public:
  virtual ~PoolStore() = default;

  // Warm pool members (core/warm_pool.h). Put inserts or replaces.
  virtual Status PutPoolMember(const PoolMemberRecord& member) = 0;
  virtual Result<std::vector<PoolMemberRecord>> ListPoolMembers() = 0;
  virtual Status DeletePoolMember(const std::string& id) = 0;
  // Takes the oldest ready member of `pool_key` out of the pool, in one transaction, so that
  // no two claims get the same one; nullopt when none is ready.
  virtual Result<std::optional<PoolMemberRecord>> ClaimPoolMember(const std::string& pool_key) = 0;
};

}  // namespace adapt::store
