// SecretService: organization secrets (/v1/secrets). A secret is a name and a value; setting
// it again makes the next version. Values are sealed at rest (core/secret_cipher.h) and never
// leave through the API: list and get show name, version, createdAt and updatedAt only.
// Sandboxes attach secrets by name at creation (the value and version are captured then, see
// Capture); image pulls read registry passwords from them (Reveal). Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/status.h"
#include "core/secret_name.h"
#include "store/secret_store.h"

namespace adapt::core {

// A value fits the 32 KiB startup environment.
inline constexpr size_t kMaxSecretValueBytes = 32 * 1024;
inline constexpr size_t kMaxSecretsPerOrg = 500;

struct SetSecret {
  std::string name;   // an environment variable name (core/secret_name.h)
  std::string value;  // at most kMaxSecretValueBytes, no NUL
};

// What the API shows of a secret: never its value.
struct Secret {
  std::string name;
  int64_t version = 0;
  int64_t created_at = 0;  // ms since the epoch
  int64_t updated_at = 0;
};

struct SavedSecret {
  Secret secret;
  bool created = false;  // version 1: the name was new
};

struct CapturedSecret {
  std::string name;
  int64_t version = 0;
  std::string value;
};

class SecretService {
 public:
  // `master_key`: adaptd's master key (storage::LoadMasterKey).
  SecretService(store::SecretStore& store, std::string master_key);

  // Creates version 1 or the next version; errors name the field ("name", "value"). With
  // `idempotency` (scope "secret"): a key the organization already used stores nothing and
  // answers the secret as it is now, `created` as the first answer had it (Conflict for
  // another request); a new key is recorded with the version it stores.
  Result<SavedSecret> Set(const std::string& org_id, const SetSecret& request,
                          const std::optional<store::IdempotencyKey>& idempotency = {});
  Result<Secret> Get(const std::string& org_id, const std::string& name);
  // A newest-first page (by creation; setting a new value keeps a secret's place);
  // InvalidArgument for a bad limit or cursor.
  Result<Page<Secret>> List(const std::string& org_id, const PageRequest& page);
  Status Delete(const std::string& org_id, const std::string& name);

  // The current value and version of each named secret, for a sandbox being created. An
  // unknown name is InvalidArgument on `field` + "[i]".
  Result<std::vector<CapturedSecret>> Capture(const std::string& org_id,
                                              const std::vector<std::string>& names,
                                              const std::string& field);
  // One secret's current value (registry credentials); unknown: InvalidArgument on `field`.
  Result<std::string> Reveal(const std::string& org_id, const std::string& name,
                             const std::string& field);

 private:
  Result<std::string> Open(const store::SecretRecord& r);
  // The answer to a Set whose Idempotency-Key stored `create_id` (SecretCreateId).
  Result<SavedSecret> ReplaySet(const std::string& org_id, const std::string& create_id);

  store::SecretStore& store_;
  std::string master_key_;
  // Held from the count of an organization's secrets to the new one's insert: concurrent
  // sets of new names would otherwise each see room below kMaxSecretsPerOrg. One adaptd owns
  // the store, so a lock of this process's is enough.
  std::mutex create_mu_;
};

struct NewSandbox;

// Sandbox create's `secrets`: captures each named secret's current value and version into
// `req`: the values join req.env, overriding a local env variable of the same name (an
// attached secret is the organization's word on that variable), and req.config.secrets
// records [{name, version}] for environmentSources. Without a service, naming secrets is
// Unsupported.
Status AttachSecrets(SecretService* secrets, const std::string& org_id, NewSandbox& req);

}  // namespace adapt::core
