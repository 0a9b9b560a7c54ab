// The least rate a request body must arrive at. A client that sends a body a few bytes at a
// time would otherwise hold a connection (and, for a streamed body, a worker) for as long
// as it likes. As in Kestrel's MinRequestBodyDataRate: only the time spent waiting for the
// client counts (not the time a handler takes between reads), and the rate is judged on the
// whole body so far, after a grace period that lets a slow start catch up.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace adapt::api {

struct UploadRateLimits {
  uint64_t min_bytes_per_second = 1024;  // 0: no minimum
  std::chrono::milliseconds grace{10000};
  // No read may wait longer than this for its first byte, whatever the rate so far.
  std::chrono::milliseconds max_wait{60000};
};

// Not thread-safe: one per body, used on its connection's strand.
class UploadRate {
 public:
  explicit UploadRate(UploadRateLimits limits) : limits_(limits) {}

  // How long the next read may wait with nothing arriving before the body is too slow.
  std::chrono::milliseconds NextReadDeadline() const;
  // Records a read that brought `bytes` after `waited`.
  void Record(uint64_t bytes, std::chrono::milliseconds waited);
  bool TooSlow() const;
  // The error's sentence: "the request body arrived slower than 1024 bytes/s ...".
  std::string Why() const;

 private:
  UploadRateLimits limits_;
  uint64_t bytes_ = 0;
  std::chrono::milliseconds waited_{0};
};

}  // namespace adapt::api
