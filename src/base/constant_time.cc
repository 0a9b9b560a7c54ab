#include "base/constant_time.h"

#include <openssl/crypto.h>

namespace adapt {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // The length of a key or a signature is no secret.
  if (a.size() != b.size()) return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace adapt
