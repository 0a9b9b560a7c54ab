// Incremental SHA-256 and MD5 (S3's ETag) over an object's bytes as they stream through.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace adapt::storage {

// Not thread-safe: one caller at a time.
class ObjectHasher {
 public:
  ObjectHasher();
  ~ObjectHasher();
  void Update(const char* data, size_t n);
  // Update, while `work` (which may only read `data`) runs beside it; returns work's status
  // once both are done. A large piece's MD5, the costlier of the two digests (about 700 MB/s
  // against SHA-256's 2 GB/s with SHA-NI here), runs on a helper thread of this hasher, so
  // that a blob's write waits for neither digest (bench/README.md, "storage").
  Status UpdateAlongside(const char* data, size_t n, const std::function<Status()>& work);
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
