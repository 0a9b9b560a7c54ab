// Seed 001's limits and defaults for a sandbox. These numbers are the API contract.
#pragma once

#include <cstdint>

namespace adapt::core::limits {

inline constexpr int64_t kCpuMin = 1, kCpuMax = 32, kCpuDefault = 1;
inline constexpr int64_t kMemoryMiBMin = 128, kMemoryMiBMax = 65536, kMemoryMiBDefault = 1024;
inline constexpr int64_t kDiskMiBMin = 64, kDiskMiBMax = 131072, kDiskMiBDefault = 2048;
inline constexpr int64_t kTtlSecondsMin = 1, kTtlSecondsMax = 86400, kTtlSecondsDefault = 3600;
// Idle hibernation (idleTimeoutSeconds): at least 10 s, so that the pause between an agent's
// two calls does not stop a sandbox, at most a day (the longest TTL).
inline constexpr int64_t kIdleTimeoutSecondsMin = 10, kIdleTimeoutSecondsMax = 86400;
inline constexpr size_t kMaxLabels = 32;
inline constexpr size_t kMaxLabelKeyBytes = 63;
inline constexpr size_t kMaxLabelValueBytes = 256;
// "Startup environments must fit the command limit of 32 KiB after merging."
inline constexpr size_t kMaxStartupEnvBytes = 32 * 1024;
inline constexpr size_t kMaxArgvBytes = 32 * 1024;
inline constexpr size_t kMaxIdempotencyKeyBytes = 255;
inline constexpr size_t kMaxImageReferenceBytes = 512;

}  // namespace adapt::core::limits
