// How long runsc may take to save a sandbox (`runsc checkpoint`) or bring one back (`runsc
// restore`) before adaptd kills it. Both move the sandbox's memory, so the limit grows with its
// memory limit. It is generous on purpose: it is there for a runsc that hangs (a sandbox that
// stops answering its control socket), which would otherwise hold a worker thread and the
// sandbox's lock for good, not to cut a slow but working save short.
#pragma once

#include <chrono>
#include <cstdint>

namespace adapt::runtime {

// 2 minutes, plus 1 minute for each GiB of memory or part of one: 3 minutes for a 512 MiB
// sandbox, 18 for 16 GiB.
inline constexpr std::chrono::seconds kCheckpointBaseTime{120};
inline constexpr std::chrono::seconds kCheckpointTimePerGib{60};
// What is assumed when a sandbox's memory limit cannot be read.
inline constexpr uint64_t kCheckpointUnknownMemoryBytes = 16ull << 30;

std::chrono::seconds CheckpointTimeLimit(uint64_t memory_bytes);

}  // namespace adapt::runtime
