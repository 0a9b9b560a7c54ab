#include "runtime/checkpoint_time_limit.h"

namespace adapt::runtime {

std::chrono::seconds CheckpointTimeLimit(uint64_t memory_bytes) {
  constexpr uint64_t kGib = 1ull << 30;
  uint64_t gibs = memory_bytes / kGib + (memory_bytes % kGib ? 1 : 0);
  return kCheckpointBaseTime + kCheckpointTimePerGib * static_cast<int64_t>(gibs);
}

}  // namespace adapt::runtime
