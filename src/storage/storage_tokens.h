// Storage tokens and signed download references. A storage token reaches one organization's
// objects through the storage gateway and nothing else (it is not an API key, so every other
// route refuses it); it expires and can be revoked. Its secret is HMAC(store key, id), so it
// is never stored; the store key is <state>/storage.key (0600). A download reference is a URL
// signed with the same key for exactly one object, read-only, until it expires; a release
// reference likewise for one deployed app's release.
#pragma once

#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/status.h"
#include "store/storage_token_store.h"

namespace adapt::storage {

constexpr int64_t kDefaultTokenTtlSeconds = 24 * 3600;
constexpr int64_t kMaxTokenTtlSeconds = 30 * 24 * 3600;
constexpr int64_t kDefaultUrlTtlSeconds = 3600;
constexpr int64_t kMaxUrlTtlSeconds = 7 * 24 * 3600;

struct NewStorageToken {
  store::StorageTokenRecord record;
  std::string secret;  // SigV4 secret access key (the access key id is record.id)
  std::string token;   // "<id>.<secret>": the bearer form, SANDBOX_STORAGE_TOKEN
  // An Idempotency-Key's replay: the token an earlier request made, its secret and token
  // empty: they are shown once, to the request that made it, and never again.
  bool replayed = false;
};

class StorageTokens {
 public:
  StorageTokens(store::StorageTokenStore& store, std::string key_file)
      : store_(store), key_file_(std::move(key_file)) {}
  // Reads the key, making it on first start.
  Status Init();

  // With `idempotency` (scope "storage_token"): a key the organization already used answers
  // the token it made, without its secret (Conflict for another request).
  Result<NewStorageToken> Create(const std::string& org_id, const std::string& name,
                                 int64_t ttl_seconds, const std::string& sandbox_id = "",
                                 const std::optional<store::IdempotencyKey>& idempotency = {});
  // Every token of the organization, oldest first (revoked and expired ones too).
  Result<std::vector<store::StorageTokenRecord>> List(const std::string& org_id);
  // One newest-first page of them (API.md's lists); InvalidArgument for a bad limit or cursor.
  Result<Page<store::StorageTokenRecord>> List(const std::string& org_id, const PageRequest& page);
  Status Revoke(const std::string& org_id, const std::string& id);
  // The token if it exists, is unexpired and unrevoked; else Unauthenticated.
  Result<store::StorageTokenRecord> Active(const std::string& id);
  // The SigV4 secret of token `id`.
  std::string SecretOf(const std::string& id) const;
  // Checks the bearer form "<id>.<secret>".
  Result<store::StorageTokenRecord> VerifyBearer(const std::string& token);

  // The query string (without '?') of a download reference for `key`, valid until
  // `expires_at` (seconds since the epoch).
  std::string SignDownload(const std::string& org_id, const std::string& key,
                           int64_t expires_at) const;
  // Unauthenticated when the signature is wrong, PermissionDenied when it expired.
  Status VerifyDownload(const std::string& org_id, const std::string& key, int64_t expires_at,
                        const std::string& signature) const;

  // The query string of a release reference: reads exactly one deployed app's release (the
  // stored blob `blob` of `org_id`) through the storage gateway until `expires_at`. Signed
  // apart from download references, so neither can stand for the other.
  std::string SignRelease(const std::string& org_id, const std::string& blob,
                          int64_t expires_at) const;
  Status VerifyRelease(const std::string& org_id, const std::string& blob, int64_t expires_at,
                       const std::string& signature) const;

 private:
  // The token an Idempotency-Key made, without its secret.
  Result<NewStorageToken> MadeToken(const std::string& org_id, const std::string& id);
  store::StorageTokenStore& store_;
  std::string key_file_;
  std::string key_;
};

}  // namespace adapt::storage
