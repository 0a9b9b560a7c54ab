// Organizations and API keys. A key belongs to one organization; the admin key (made on
// first start) may also manage organizations and keys. Keys are stored as SHA-256 hashes.
#pragma once

#include <string>

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

struct NewApiKey {
  store::ApiKeyRecord record;
  std::string key;  // the text, shown once
};

class Auth {
 public:
  explicit Auth(store::Store& store) : store_(store) {}

  // Creates the admin organization and key on first start and writes the key to
  // `key_file` (mode 0600). Does nothing when the admin organization exists.
  Status Bootstrap(const std::string& key_file);

  // Unauthenticated for a missing or unknown key. The Principal says whether its organization
  // is registered.
  Result<Principal> Authenticate(const std::string& bearer_key);

  Result<store::OrgRecord> CreateOrg(const Principal& who, const std::string& name);
  Result<std::vector<store::OrgRecord>> ListOrgs(const Principal& who);
  Result<NewApiKey> CreateKey(const Principal& who, const std::string& org_id,
                              const std::string& name);
  // The admin key manages every organization's keys; another key only its own organization's
  // (so a tenant can rotate its keys), and another organization answers NotFound.
  Result<std::vector<store::ApiKeyRecord>> ListKeys(const Principal& who,
                                                    const std::string& org_id);
  // Deleting a key also revokes the OAuth tokens issued with it. The admin key cannot be
  // deleted (adaptd would lock its operator out).
  Status DeleteKey(const Principal& who, const std::string& org_id, const std::string& key_id);

 private:
  Result<NewApiKey> MakeKey(const std::string& org_id, const std::string& name, bool is_admin);

  store::Store& store_;
};

}  // namespace adapt::core
