// Reads and writes on a descriptor whose other end may stall on purpose (a sandbox's root can
// stop or replace the process adaptd talks to): each gives up at a deadline instead of holding
// its thread for good.
#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include "base/status.h"

namespace adapt::os {

using Deadline = std::chrono::steady_clock::time_point;

// What `fd` has once it is readable (at most `capacity` bytes; 0 at its end). kUnavailable
// when nothing came before `deadline`.
Result<size_t> ReadSomeBefore(int fd, char* buffer, size_t capacity, Deadline deadline);

// All of `data`, never blocking past `deadline` (kUnavailable then; what was written stays
// written). A reader that has gone is an error. `fd` may be blocking: a socket is written with
// MSG_DONTWAIT, anything else with O_NONBLOCK set for the write only.
Status WriteAllBefore(int fd, std::string_view data, Deadline deadline);

}  // namespace adapt::os
