// Crash points for the reliability tests (tests/reliability/test_crash_points.py).
//
// ADAPT_FAULT_POINT("sandbox.create.after_row") marks a step after which a crash must be
// survivable. The points are compiled into every build and cost one branch on an empty set:
// they do nothing unless the environment variable ADAPT_FAULT, read once at the first point,
// names them (comma-separated). An armed point makes the process exit at once with status
// kFaultExitCode through _exit, as a crash would: no destructors, no flushing, no cleanup.
#pragma once

namespace adapt {

inline constexpr int kFaultExitCode = 86;

// Exits the process with kFaultExitCode when ADAPT_FAULT names `name`.
void FaultPoint(const char* name);

// The points ADAPT_FAULT arms, comma-separated ("" when none): logged at start-up.
const char* ArmedFaultPoints();

}  // namespace adapt

#define ADAPT_FAULT_POINT(name) ::adapt::FaultPoint(name)
