#include "image/digest.h"

#include <openssl/evp.h>

#include "base/hex.h"

namespace adapt::image {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr);
}
Sha256::~Sha256() = default;

void Sha256::Update(const void* data, size_t n) { EVP_DigestUpdate(impl_->ctx, data, n); }

std::string Sha256::Digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, md, &len);
  return "sha256:" + HexEncode(md, len);
}

std::string Sha256Of(const std::string& data) {
  Sha256 h;
  h.Update(data.data(), data.size());
  return h.Digest();
}

}  // namespace adapt::image
