#include "core/secret_cipher.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <memory>

#include "storage/volume_key.h"

namespace adapt::core {
namespace {

constexpr size_t kKeyBytes = 32, kNonceBytes = 12, kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }
const unsigned char* Bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

Result<std::string> DeriveSecretKey(const std::string& master, const std::string& org_id) {
  std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr),
                                                        &EVP_KDF_free);
  if (!kdf) return Internal("OpenSSL has no HKDF");
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(EVP_KDF_CTX_new(kdf.get()),
                                                                &EVP_KDF_CTX_free);
  if (!ctx) return Internal("cannot make an HKDF context");
  std::string salt = "adapt-secrets-v1";
  std::string info = "org:" + org_id;
  char digest[] = "SHA512";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(master.data()),
                                        master.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt.data(), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
      OSSL_PARAM_construct_end()};
  std::string key(kKeyBytes, '\0');
  if (EVP_KDF_derive(ctx.get(), Bytes(key), key.size(), params) != 1)
    return Internal("deriving the secrets key failed");
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
  if (!ctx ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
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
  return storage::ToHex(nonce + out + tag);
}

Result<std::string> OpenSecret(const std::string& key, const std::string& aad,
                               const std::string& sealed) {
  auto raw = storage::FromHex(sealed);
  if (!raw.ok() || raw->size() < kNonceBytes + kTagBytes || key.size() != kKeyBytes)
    return Internal("a stored secret is damaged");
  std::string nonce = raw->substr(0, kNonceBytes);
  std::string tag = raw->substr(raw->size() - kTagBytes);
  std::string body = raw->substr(kNonceBytes, raw->size() - kNonceBytes - kTagBytes);
  CipherCtx ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
  std::string out(body.size() + 16, '\0');
  int len = 0, total = 0;
  if (!ctx ||
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), Bytes(out), &len, Bytes(body), static_cast<int>(body.size())) !=
          1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, Bytes(tag)) != 1)
    return Internal("a stored secret cannot be opened");
  total = len;
  // A wrong key, name or a changed byte fails the tag check here.
  if (EVP_DecryptFinal_ex(ctx.get(), Bytes(out) + total, &len) != 1)
    return Internal("a stored secret cannot be opened with this server's master key");
  out.resize(total + len);
  return out;
}

}  // namespace adapt::core
