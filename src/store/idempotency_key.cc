#include "store/idempotency_store.h"

namespace adapt::store {

Status CheckIdempotencyKey(const IdempotencyKey& key) {
  if (key.key.empty() || key.key.size() > kMaxIdempotencyKeyBytes)
    return InvalidArgument(
        "Idempotency-Key",
        "Idempotency-Key must be 1 to " + std::to_string(kMaxIdempotencyKeyBytes) + " characters");
  return Status::Ok();
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
