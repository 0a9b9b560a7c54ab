// Incremental SHA-256 and MD5 (S3's ETag) over an object's bytes as they stream through.
#pragma once

#include <memory>
#include <string>

namespace adapt::storage {

class ObjectHasher {
 public:
  ObjectHasher();
  ~ObjectHasher();
  void Update(const char* data, size_t n);
  // Hex digests; call once, after the last Update.
  void Finish(std::string& sha256_hex, std::string& md5_hex);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Hex MD5 of `data` (bytes, not hex).
std::string Md5Hex(const std::string& data);
// Raw HMAC-SHA256 of `data` under `key` (SigV4, signed references).
std::string HmacSha256(const std::string& key, const std::string& data);

}  // namespace adapt::storage
