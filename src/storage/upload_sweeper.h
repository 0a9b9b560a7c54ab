// UploadSweeper: a background thread that removes multipart uploads left unfinished for longer
// than a configured age, so that abandoned parts do not hold disk forever (S3's
// AbortIncompleteMultipartUpload lifecycle rule, always on).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "storage/object_store.h"

namespace adapt::storage {

constexpr int64_t kDefaultUploadMaxAgeSeconds = 24 * 3600;

class UploadSweeper {
 public:
  UploadSweeper(ObjectStore& objects, int64_t max_age_seconds)
      : objects_(objects), max_age_seconds_(max_age_seconds) {}
  ~UploadSweeper() { Stop(); }

  // Sweeps at once and then every quarter of the age (at least every second, at most every
  // 15 minutes).
  void Start();
  void Stop();

 private:
  void Run();

  ObjectStore& objects_;
  const int64_t max_age_seconds_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace adapt::storage
