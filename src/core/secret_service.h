// SecretService: organization secrets (/v1/secrets). A secret is a name and a value; setting
// it again makes the next version. Values are sealed at rest (core/secret_cipher.h) and never
// leave through the API: list and get show name, version, createdAt and updatedAt only.
// Sandboxes attach secrets by name at creation (the value and version are captured then, see
// Capture); image pulls read registry passwords from them (Reveal). Thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/secret_name.h"
#include "store/store.h"

namespace adapt::core {

// A value fits the 32 KiB startup environment.
inline constexpr size_t kMaxSecretValueBytes = 32 * 1024;
inline constexpr size_t kMaxSecretsPerOrg = 500;

struct CapturedSecret {
  std::string name;
  int64_t version = 0;
  std::string value;
};

class SecretService {
 public:
  // `master_key`: adaptd's master key (storage::LoadMasterKey).
  SecretService(store::Store& store, std::string master_key);

  // POST /v1/secrets {name, value}: creates version 1 or the next version. `created` says
  // which. Returns the secret's view.
  Result<nlohmann::json> Set(const std::string& org_id, const nlohmann::json& body,
                             bool* created = nullptr);
  Result<nlohmann::json> Get(const std::string& org_id, const std::string& name);
  Result<nlohmann::json> List(const std::string& org_id);
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

  store::Store& store_;
  std::string master_key_;
};

struct NewSandbox;

// Sandbox create's `secrets`: captures each named secret's current value and version into
// `req`: the values join req.env, overriding a local env variable of the same name (an
// attached secret is the organization's word on that variable), and req.config.secrets
// records [{name, version}] for environmentSources. Without a service, naming secrets is
// Unsupported.
Status AttachSecrets(SecretService* secrets, const std::string& org_id, NewSandbox& req);

}  // namespace adapt::core
