// Incremental sha256, as "sha256:<hex>" digests.
#pragma once

#include <memory>
#include <string>

namespace adapt::image {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  void Update(const void* data, size_t n);
  std::string Digest();  // "sha256:<hex>"; call once

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string Sha256Of(const std::string& data);

}  // namespace adapt::image
