// IdempotencyStore in memory.
#include "store/memory_store.h"

namespace adapt::store {

Result<std::optional<std::string>> MemoryStore::FindClaimLocked(
    const IdempotencyClaim& claim) const {
  auto it = idempotency_.find({claim.org_id, claim.scope, claim.key.key});
  if (it == idempotency_.end()) return std::optional<std::string>();
  if (it->second.body_hash != claim.key.body_hash) return IdempotencyKeyReused();
  return std::optional<std::string>(it->second.object_id);
}

Result<std::optional<std::string>> MemoryStore::FindIdempotentCreate(
    const IdempotencyClaim& claim) {
  std::lock_guard lock(mu_);
  return FindClaimLocked(claim);
}

Result<IdempotentCreate> MemoryStore::CreateOnce(
    const IdempotencyClaim& claim, const std::function<Result<std::string>()>& insert) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  ASSIGN_OR_RETURN(std::optional<std::string> earlier, FindClaimLocked(claim));
  if (earlier) return IdempotentCreate{*earlier, true};
  // Each method `insert` calls is atomic on its own, and the lock keeps every other caller
  // out until the claim is recorded: nothing between them can be seen.
  ASSIGN_OR_RETURN(std::string id, insert());
  idempotency_[{claim.org_id, claim.scope, claim.key.key}] = {claim.key.body_hash, id,
                                                              claim.created_at};
  return IdempotentCreate{id, false};
}

Status MemoryStore::PurgeIdempotencyKeys(int64_t before) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  std::erase_if(idempotency_, [&](const auto& kv) { return kv.second.created_at < before; });
  return Status::Ok();
}

}  // namespace adapt::store
