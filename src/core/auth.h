// Organizations and API keys. A key belongs to one organization; the admin key (made on
// first start) may also manage organizations and keys. Keys are stored as SHA-256 hashes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/status.h"
#include "store/store.h"

namespace adapt::core {

struct Principal {
  std::string org_id;
  std::string key_id;  // the API key's id, or the user's for a user's OAuth grant
  bool is_admin = false;
  // False while the organization is a sign-up that has not called register_user: then only
  // reads and registering are allowed (RequireRegistered, core/registration_gate.h).
  bool registered = true;
};

// A key a tenant makes for its own organization (Auth::CreateOwnKey).
struct CreateKeyRequest {
  std::string name;                    // at most 63 bytes, no control characters; "" = "key"
  std::optional<int64_t> ttl_seconds;  // 1 .. kMaxKeyTtlSeconds; none: the key never expires
};

inline constexpr int64_t kMaxKeyTtlSeconds = 5LL * 366 * 24 * 3600;  // about five years
inline constexpr size_t kMaxKeysPerOrg = 100;

struct NewApiKey {
  store::ApiKeyRecord record;
  std::string key;  // the text, shown once
  // An Idempotency-Key's replay: the key an earlier request made, `key` empty (its text is
  // stored only hashed, and is shown once, to the request that made it).
  bool replayed = false;
};

class Auth {
 public:
  explicit Auth(store::Store& store) : store_(store) {}

  // Creates the admin organization and key on first start and writes the key to
  // `key_file` (mode 0600). Does nothing when the admin organization exists.
  Status Bootstrap(const std::string& key_file);

  // Unauthenticated for a missing, unknown or expired key. The Principal says whether its
  // organization is registered.
  Result<Principal> Authenticate(const std::string& bearer_key);

  // The creates below take an Idempotency-Key, kept under the caller's organization (scopes
  // "org" and "api_key"): a key already used answers the object it made (Conflict for another
  // request); a new one is recorded in the transaction that stores the object.
  Result<store::OrgRecord> CreateOrg(const Principal& who, const std::string& name,
                                     const std::optional<store::IdempotencyKey>& idempotency = {});
  // Lists below: one newest-first page (API.md's lists); InvalidArgument for a bad limit or
  // cursor.
  Result<Page<store::OrgRecord>> ListOrgs(const Principal& who, const PageRequest& page = {});
  // Admin only. `ttl_seconds` as in CreateKeyRequest.
  Result<NewApiKey> CreateKey(const Principal& who, const std::string& org_id,
                              const std::string& name,
                              std::optional<int64_t> ttl_seconds = std::nullopt,
                              const std::optional<store::IdempotencyKey>& idempotency = {});
  // The admin key manages every organization's keys; another key only its own organization's
  // (so a tenant can rotate its keys), and another organization answers NotFound.
  Result<Page<store::ApiKeyRecord>> ListKeys(const Principal& who, const std::string& org_id,
                                             const PageRequest& page = {});
  // Deleting a key also revokes the OAuth tokens issued with it. The admin key cannot be
  // deleted (adaptd would lock its operator out).
  Status DeleteKey(const Principal& who, const std::string& org_id, const std::string& key_id);

  // The caller's own organization's keys (/v1/keys), for any of its callers: a user (dashboard
  // session or OAuth grant) or one of its keys. The key text is answered once, by CreateOwnKey;
  // ResourceExhausted past kMaxKeysPerOrg. Another organization's key id answers NotFound;
  // revoking deletes the key and its OAuth grants in one transaction, so it stops working at
  // once (the admin key: Conflict).
  Result<NewApiKey> CreateOwnKey(const Principal& who, const CreateKeyRequest& request,
                                 const std::optional<store::IdempotencyKey>& idempotency = {});
  Result<Page<store::ApiKeyRecord>> ListOwnKeys(const Principal& who, const PageRequest& page = {});
  Status RevokeOwnKey(const Principal& who, const std::string& key_id);

 private:
  Result<NewApiKey> MakeKey(const std::string& org_id, const std::string& name, bool is_admin,
                            int64_t expires_at = 0,
                            const std::optional<store::IdempotencyClaim>& claim = {});
  // The claim of `who`'s Idempotency-Key in `scope`; the earlier object's id when the key
  // was used (Conflict for another request), else nullopt (and `claim` is set).
  Result<std::optional<std::string>> ClaimKey(const Principal& who, const std::string& scope,
                                              const std::optional<store::IdempotencyKey>& key,
                                              std::optional<store::IdempotencyClaim>& claim);
  // The API key an Idempotency-Key made, without its text.
  Result<NewApiKey> MadeApiKey(const std::string& org_id, const std::string& id);

  store::Store& store_;
};

}  // namespace adapt::core
