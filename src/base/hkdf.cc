#include "base/hkdf.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <memory>

namespace adapt {

Result<std::string> HkdfSha512(const std::string& master, const std::string& salt,
                               const std::string& info, size_t bytes) {
  std::unique_ptr<EVP_KDF, decltype(&EVP_KDF_free)> kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr),
                                                        &EVP_KDF_free);
  if (!kdf) return Internal("OpenSSL has no HKDF");
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(EVP_KDF_CTX_new(kdf.get()),
                                                                &EVP_KDF_CTX_free);
  if (!ctx) return Internal("cannot make an HKDF context");
  // OpenSSL takes the parameters as non-const buffers; it only reads them.
  auto buffer = [](const std::string& s) { return const_cast<char*>(s.data()); };
  char digest[] = "SHA512";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, buffer(master), master.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, buffer(salt), salt.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, buffer(info), info.size()),
      OSSL_PARAM_construct_end()};
  std::string key(bytes, '\0');
  if (EVP_KDF_derive(ctx.get(), reinterpret_cast<unsigned char*>(key.data()), key.size(), params) !=
      1)
    return Internal("HKDF-SHA512 key derivation failed");
  return key;
}

}  // namespace adapt
