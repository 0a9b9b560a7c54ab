#include "base/time.h"
#include "store/idempotency_store.h"

namespace adapt::store {

Status CheckIdempotencyKey(const IdempotencyKey& key) {
  if (key.key.empty() || key.key.size() > kMaxIdempotencyKeyBytes)
    return InvalidArgument(
        "Idempotency-Key",
        "Idempotency-Key must be 1 to " + std::to_string(kMaxIdempotencyKeyBytes) + " characters");
  return Status::Ok();
}

Result<std::optional<IdempotencyClaim>> ClaimFor(const std::string& org_id,
                                                 const std::string& scope,
                                                 const std::optional<IdempotencyKey>& key) {
  return ClaimFor(org_id, scope, key, NowMillis());
}

Result<std::optional<IdempotencyClaim>> ClaimFor(const std::string& org_id,
                                                 const std::string& scope,
                                                 const std::optional<IdempotencyKey>& key,
                                                 int64_t created_at) {
  if (!key) return std::optional<IdempotencyClaim>();
  RETURN_IF_ERROR(CheckIdempotencyKey(*key));
  return std::optional<IdempotencyClaim>(IdempotencyClaim{org_id, scope, *key, created_at});
}

Status IdempotencyKeyReused() {
  return Status(Code::kConflict,
                "the Idempotency-Key was already used with a different request body",
                "Idempotency-Key");
}

Status IdempotentObjectGone(const std::string& what) {
  return Status(Code::kConflict,
                "the Idempotency-Key made " + what +
                    ", which has been deleted since; send the request with a new key",
                "Idempotency-Key");
}

}  // namespace adapt::store
