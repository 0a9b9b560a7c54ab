#include "storage/object_hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/hex.h"

namespace adapt::storage {

struct ObjectHasher::Impl {
  EVP_MD_CTX* sha = EVP_MD_CTX_new();
  EVP_MD_CTX* md5 = EVP_MD_CTX_new();
  ~Impl() {
    EVP_MD_CTX_free(sha);
    EVP_MD_CTX_free(md5);
  }
};

ObjectHasher::ObjectHasher() : impl_(std::make_unique<Impl>()) {
  EVP_DigestInit_ex(impl_->sha, EVP_sha256(), nullptr);
  EVP_DigestInit_ex(impl_->md5, EVP_md5(), nullptr);
}

ObjectHasher::~ObjectHasher() = default;

void ObjectHasher::Update(const char* data, size_t n) {
  EVP_DigestUpdate(impl_->sha, data, n);
  EVP_DigestUpdate(impl_->md5, data, n);
}

void ObjectHasher::Finish(std::string& sha256_hex, std::string& md5_hex) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->sha, d, &n);
  sha256_hex = HexEncode(d, n);
  EVP_DigestFinal_ex(impl_->md5, d, &n);
  md5_hex = HexEncode(d, n);
}

std::string Md5Hex(const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), d, &n, EVP_md5(), nullptr);
  return HexEncode(d, n);
}

std::string HmacSha256(const std::string& key, const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), d, &n);
  return std::string(reinterpret_cast<char*>(d), n);
}

}  // namespace adapt::storage
