// The keys of encrypted volumes. adaptd holds one master key (ADAPT_STORAGE_MASTER_KEY, or
// <state>/storage/master.key, mode 0600, made on first start); each volume's 64-byte fscrypt
// key is derived from it with HKDF-SHA512 and the volume's id, so no volume key is stored.
// Keys never reach logs or the API.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::storage {

// The master key's size in bytes (its files and the variable hold it as hex).
inline constexpr size_t kMasterKeyBytes = 32;

// `env_hex`: the variable's value (empty: unset), hex of at least kMasterKeyBytes bytes.
// Otherwise reads `path`, creating it with a random key when it does not exist.
Result<std::string> LoadMasterKey(const std::string& path, const std::string& env_hex);

// HKDF-SHA512(master, salt "adapt-storage-v1", info "volume:" + volume_id), 64 bytes.
Result<std::string> DeriveVolumeKey(const std::string& master, const std::string& volume_id);

}  // namespace adapt::storage
