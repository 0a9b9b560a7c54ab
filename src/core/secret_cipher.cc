#include "core/secret_cipher.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "base/hex.h"
#include "base/hkdf.h"

namespace adapt::core {
namespace {

constexpr size_t kKeyBytes = 32, kNonceBytes = 12, kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }
const unsigned char* Bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// AES-256-GCM, fetched from OpenSSL's provider once: EVP_aes_256_gcm() makes OpenSSL 3 look
// the cipher up again (under its lock) at every init, a fifth of opening a sandbox's
// environment (bench/README.md, "api"). The same cipher either way.
const EVP_CIPHER* Aes256Gcm() {
  static EVP_CIPHER* fetched = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  return fetched ? fetched : EVP_aes_256_gcm();
}

// A decryption context with its key set up, kept per thread for the last key it opened
// with: AES-GCM's key schedule and GHASH table were most of opening a sealed environment, and
// a list of sandboxes opens one per row, all under one organization's key (bench/README.md,
// "api"). Each open then sets only its nonce. Forgotten after any failure, so a context in
// an unknown state is never reused.
struct KeyedDecryption {
  std::string key;
  CipherCtx ctx{nullptr, &EVP_CIPHER_CTX_free};
};
thread_local KeyedDecryption kept_decryption;

EVP_CIPHER_CTX* DecryptionWithKey(const std::string& key) {
  KeyedDecryption& kept = kept_decryption;
  if (kept.ctx && kept.key == key) return kept.ctx.get();
  kept.key.clear();
  kept.ctx.reset(EVP_CIPHER_CTX_new());
  if (!kept.ctx ||
      EVP_DecryptInit_ex(kept.ctx.get(), Aes256Gcm(), nullptr, Bytes(key), nullptr) != 1) {
    kept.ctx.reset();
    return nullptr;
  }
  kept.key = key;
  return kept.ctx.get();
}

void ForgetDecryption() {
  kept_decryption.key.clear();
  kept_decryption.ctx.reset();
}

}  // namespace

Result<std::string> DeriveSecretKey(const std::string& master, const std::string& org_id) {
  auto key = HkdfSha512(master, "adapt-secrets-v1", "org:" + org_id, kKeyBytes);
  if (!key.ok()) return key.status().WithContext("deriving the secrets key");
  return key;
}

Result<std::string> SealSecret(const std::string& key, const std::string& aad,
                               const std::string& plain) {
  if (key.size() != kKeyBytes) return Internal("the secrets key has the wrong size");
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(Bytes(nonce), static_cast<int>(nonce.size())) != 1)
    return Internal("cannot draw random bytes for a secret's nonce");
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(plain.size() + 16, '\0');
  int len = 0, total = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), Aes256Gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), Bytes(out), &len, Bytes(plain),
                        static_cast<int>(plain.size())) != 1)
    return Internal("sealing a secret failed");
  total = len;
  if (EVP_EncryptFinal_ex(ctx.get(), Bytes(out) + total, &len) != 1)
    return Internal("sealing a secret failed");
  total += len;
  out.resize(total);
  std::string tag(kTagBytes, '\0');
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, Bytes(tag)) != 1)
    return Internal("sealing a secret failed");
  return HexEncode(nonce + out + tag);
}

Result<std::string> OpenSecret(const std::string& key, const std::string& aad,
                               const std::string& sealed) {
  auto raw = HexDecode(sealed);
  if (!raw || raw->size() < kNonceBytes + kTagBytes || key.size() != kKeyBytes)
    return Internal("a stored secret is damaged");
  std::string nonce = raw->substr(0, kNonceBytes);
  std::string tag = raw->substr(raw->size() - kTagBytes);
  std::string body = raw->substr(kNonceBytes, raw->size() - kNonceBytes - kTagBytes);
  EVP_CIPHER_CTX* ctx = DecryptionWithKey(key);
  std::string out(body.size() + 16, '\0');
  int len = 0, total = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, Bytes(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx, nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx, Bytes(out), &len, Bytes(body), static_cast<int>(body.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes, Bytes(tag)) != 1) {
    ForgetDecryption();
    return Internal("a stored secret cannot be opened");
  }
  total = len;
  // A wrong key, name or a changed byte fails the tag check here.
  if (EVP_DecryptFinal_ex(ctx, Bytes(out) + total, &len) != 1) {
    ForgetDecryption();
    return Internal("a stored secret cannot be opened with this server's master key");
  }
  out.resize(total + len);
  return out;
}

namespace {

// The organizations' keys, derived once each: every read of a sandbox opens its sealed
// environment, and the derivation (HKDF-SHA512) was 4% of adaptd's CPU under GET
// /v1/sandboxes/{id} (bench/README.md, "api"). Bounded: past kMaxKeys it starts again.
class OrgKeys {
 public:
  explicit OrgKeys(std::string master) : master_(std::move(master)) {}
  Result<std::string> Of(const std::string& org_id) {
    std::lock_guard lock(mu_);
    if (auto it = keys_.find(org_id); it != keys_.end()) return it->second;
    ASSIGN_OR_RETURN(std::string key, DeriveSecretKey(master_, org_id));
    if (keys_.size() >= kMaxKeys) keys_.clear();
    keys_.emplace(org_id, key);
    return key;
  }

 private:
  static constexpr size_t kMaxKeys = 4096;
  const std::string master_;
  std::mutex mu_;
  std::unordered_map<std::string, std::string> keys_;  // guarded by mu_
};

}  // namespace

store::ValueSealer MakeValueSealer(std::string master) {
  auto keys = std::make_shared<OrgKeys>(std::move(master));
  store::ValueSealer sealer;
  sealer.seal = [keys](const std::string& org_id, const std::string& aad,
                       const std::string& plain) -> Result<std::string> {
    ASSIGN_OR_RETURN(std::string key, keys->Of(org_id));
    return SealSecret(key, aad, plain);
  };
  sealer.open = [keys](const std::string& org_id, const std::string& aad,
                       const std::string& sealed) -> Result<std::string> {
    ASSIGN_OR_RETURN(std::string key, keys->Of(org_id));
    return OpenSecret(key, aad, sealed);
  };
  return sealer;
}

}  // namespace adapt::core
