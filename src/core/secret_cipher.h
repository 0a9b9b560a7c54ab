// Sealing organization secrets at rest: AES-256-GCM under a key derived from adaptd's master
// key (the storage master key) with HKDF-SHA512 and the organization's id, so that one
// organization's ciphertext never opens under another's key and no secret key is stored.
#pragma once

#include <string>

#include "base/status.h"
#include "store/value_sealer.h"

namespace adapt::core {

// HKDF-SHA512(master, salt "adapt-secrets-v1", info "org:" + org_id), 32 bytes.
Result<std::string> DeriveSecretKey(const std::string& master, const std::string& org_id);

// Returns hex(nonce || ciphertext || tag). `aad` (the secret's name) is authenticated, so a
// sealed value moved to another name does not open.
Result<std::string> SealSecret(const std::string& key, const std::string& aad,
                               const std::string& plain);
// Internal error when `sealed` was not made by SealSecret with this key and aad.
Result<std::string> OpenSecret(const std::string& key, const std::string& aad,
                               const std::string& sealed);

// The store's sealer (sandboxes' environments): SealSecret under DeriveSecretKey(master,
// org_id).
store::ValueSealer MakeValueSealer(std::string master);

}  // namespace adapt::core
