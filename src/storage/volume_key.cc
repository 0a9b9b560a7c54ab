#include "storage/volume_key.h"

#include <openssl/rand.h>

#include "base/hex.h"
#include "base/hkdf.h"
#include "os/files.h"
#include "os/fscrypt.h"

namespace adapt::storage {

Result<std::string> LoadMasterKey(const std::string& path, const std::string& env_hex) {
  auto parse = [](std::string hex, const std::string& where) -> Result<std::string> {
    while (!hex.empty() && (hex.back() == '\n' || hex.back() == ' ')) hex.pop_back();
    auto key = HexDecode(hex);
    if (!key || key->size() < kMasterKeyBytes)
      return InvalidArgument("", "the storage master key in " + where + " must be at least " +
                                     std::to_string(kMasterKeyBytes * 2) + " hex digits");
    return *key;
  };
  if (!env_hex.empty()) return parse(env_hex, "ADAPT_STORAGE_MASTER_KEY");
  if (!os::Exists(path)) {
    std::string key(kMasterKeyBytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1)
      return Internal("cannot draw random bytes for the storage master key");
    RETURN_IF_ERROR(os::WriteFileAtomic(path, HexEncode(key) + "\n", 0600)
                        .WithContext("writing the storage master key"));
    return key;
  }
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(path));
  return parse(text, path);
}

Result<std::string> DeriveVolumeKey(const std::string& master, const std::string& volume_id) {
  auto key = HkdfSha512(master, "adapt-storage-v1", "volume:" + volume_id, os::kFscryptKeyBytes);
  if (!key.ok()) return key.status().WithContext("deriving a volume key");
  return key;
}

}  // namespace adapt::storage
