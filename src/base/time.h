// Wall-clock time as the API shows it: RFC 3339 UTC with milliseconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace adapt {

using Clock = std::chrono::system_clock;

// Milliseconds since the Unix epoch, now.
int64_t NowMillis();

// "2026-11-29T19:30:00.123Z" for `millis` since the epoch.
std::string FormatRfc3339(int64_t millis);

}  // namespace adapt
