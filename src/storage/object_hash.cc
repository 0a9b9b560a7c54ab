#include "storage/object_hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

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

std::string HexOf(const unsigned char* bytes, size_t n) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

void ObjectHasher::Finish(std::string& sha256_hex, std::string& md5_hex) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->sha, d, &n);
  sha256_hex = HexOf(d, n);
  EVP_DigestFinal_ex(impl_->md5, d, &n);
  md5_hex = HexOf(d, n);
}

std::string Md5Hex(const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), d, &n, EVP_md5(), nullptr);
  return HexOf(d, n);
}

std::string HmacSha256(const std::string& key, const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), d, &n);
  return std::string(reinterpret_cast<char*>(d), n);
}

std::string HexOf(const std::string& bytes) {
  return HexOf(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace adapt::storage
