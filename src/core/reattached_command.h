// What the runs re-attached after an adaptd restart (SandboxJobAttempts, SandboxAutomationRunner)
// share: how long they wait for the command they recorded.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "base/time.h"
#include "core/command_view.h"
#include "core/waiter.h"

namespace adapt::core {

// The command's own timeout, counted from its start before the restart, ends it; the margin
// covers recording that end (as the runners' waits for the commands they started have).
inline Waiter::Clock::time_point ReattachedCommandDeadline(const Command& c) {
  int64_t left_ms =
      std::max<int64_t>(0, c.started_at + int64_t{c.timeout_seconds} * 1000 - NowMillis());
  return Waiter::Clock::now() + std::chrono::milliseconds(left_ms) + std::chrono::seconds(60);
}

}  // namespace adapt::core
