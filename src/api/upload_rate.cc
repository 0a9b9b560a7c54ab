#include "api/upload_rate.h"

#include <algorithm>

namespace adapt::api {

using std::chrono::milliseconds;

milliseconds UploadRate::NextReadDeadline() const {
  if (limits_.min_bytes_per_second == 0) return limits_.max_wait;
  // The wait at which both the grace and the credit of the bytes so far run out.
  const auto credit = milliseconds(bytes_ * 1000 / limits_.min_bytes_per_second);
  auto wait = std::max(limits_.grace, credit) - waited_;
  return std::clamp(wait, milliseconds(1), limits_.max_wait);
}

void UploadRate::Record(uint64_t bytes, milliseconds waited) {
  bytes_ += bytes;
  waited_ += waited;
}

bool UploadRate::TooSlow() const {
  if (limits_.min_bytes_per_second == 0 || waited_ <= limits_.grace) return false;
  return bytes_ * 1000 < limits_.min_bytes_per_second * static_cast<uint64_t>(waited_.count());
}

std::string UploadRate::Why() const {
  return "the request body arrived slower than " + std::to_string(limits_.min_bytes_per_second) +
         " bytes/s (" + std::to_string(bytes_) + " bytes in " +
         std::to_string(waited_.count() / 1000) + " s)";
}

}  // namespace adapt::api
