#include "base/request_fingerprint.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <memory>

#include "base/hex.h"
#include "base/ids.h"

namespace adapt {
namespace {

// Set once before requests are served and never freed: readers on any thread see it whole.
std::atomic<const std::string*> fingerprint_key{nullptr};

}  // namespace

void SetRequestFingerprintKey(std::string key) {
  fingerprint_key.store(new std::string(std::move(key)), std::memory_order_release);
}

std::string RequestFingerprint(std::string_view text) {
  const std::string* key = fingerprint_key.load(std::memory_order_acquire);
  if (!key) return Sha256Hex(text);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key->data(), static_cast<int>(key->size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &length);
  return HexEncode(mac, length);
}

}  // namespace adapt
