// HKDF (RFC 5869) over SHA-512: the one key derivation behind every key adapt derives from a
// master key (sealed secrets, volume encryption). Changing what it returns for given inputs
// makes existing volumes and sealed secrets unreadable: its tests pin known answers.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt {

// `bytes` bytes of key material from `master` (the input keying material), `salt` and `info`.
Result<std::string> HkdfSha512(const std::string& master, const std::string& salt,
                               const std::string& info, size_t bytes);

}  // namespace adapt
