// Idempotency-Key for every create (API.md): one table of (organization, scope, key), where the
// scope names the kind of object ("sandbox", "volume", "secret", ...), each row holding the
// fingerprint of the request that first used the key and the id of the object it made. One
// domain of Store (store/store.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

// A key longer than this is refused (400): it is a client's retry token, not a payload.
inline constexpr size_t kMaxIdempotencyKeyBytes = 255;

// A create's claim on a key: within `org_id` and `scope`, `key` names the request whose
// fingerprint is `body_hash`.
struct IdempotencyClaim {
  std::string org_id;
  std::string scope;
  IdempotencyKey key;
  int64_t created_at = 0;
};

struct IdempotentCreate {
  std::string object_id;
  bool replayed = false;  // an earlier request with the key made it; nothing was written now
};

// InvalidArgument (field Idempotency-Key) unless the key is 1 to kMaxIdempotencyKeyBytes bytes.
Status CheckIdempotencyKey(const IdempotencyKey& key);

// The claim a create makes with `key` under `scope` for `org_id`, stamped now; nullopt without
// a key; InvalidArgument (as CheckIdempotencyKey) for a key of a bad length.
Result<std::optional<IdempotencyClaim>> ClaimFor(const std::string& org_id,
                                                 const std::string& scope,
                                                 const std::optional<IdempotencyKey>& key);
// The same, stamped `created_at` (a service's own clock).
Result<std::optional<IdempotencyClaim>> ClaimFor(const std::string& org_id,
                                                 const std::string& scope,
                                                 const std::optional<IdempotencyKey>& key,
                                                 int64_t created_at);

// Conflict (field Idempotency-Key): the key was first used with another request.
Status IdempotencyKeyReused();

// Conflict (field Idempotency-Key): the object the key made, `what`, has been deleted since.
Status IdempotentObjectGone(const std::string& what);

class IdempotencyStore {
 public:
  virtual ~IdempotencyStore() = default;

  // The id of the object an earlier request with this key made; nullopt when the key is not
  // recorded; Conflict when it was recorded with another fingerprint.
  virtual Result<std::optional<std::string>> FindIdempotentCreate(
      const IdempotencyClaim& claim) = 0;
  // Runs `insert` and records the claim in one transaction, so that neither is kept without
  // the other. `insert` calls only this store's methods (each joins the transaction) and
  // returns the new object's id; its failure writes nothing and is returned. When the key is
  // already recorded: nothing runs, and the answer is the earlier id (replayed) or Conflict.
  // Calls into the store from `insert` run while the store's lock is held: no other thread's
  // store call interleaves.
  virtual Result<IdempotentCreate> CreateOnce(
      const IdempotencyClaim& claim, const std::function<Result<std::string>()>& insert) = 0;
  // Forgets idempotency keys created before `before`, of every scope.
  virtual Status PurgeIdempotencyKeys(int64_t before) = 0;
};

}  // namespace adapt::store
