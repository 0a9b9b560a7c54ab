// Not propagating a Status, on purpose. Status and Result are [[nodiscard]]; where an error
// truly changes nothing (best-effort cleanup, a second attempt comes anyway), IgnoreError says
// why at the call and still logs it at debug level, so that it can be found when it matters
// after all; WarnIfError is for an error that matters but has nowhere to go.
#pragma once

#include <string_view>

#include "base/log.h"
#include "base/status.h"

namespace adapt {

inline void IgnoreError(const Status& status, std::string_view why) {
  if (!status.ok()) spdlog::debug("ignored ({}): {}", why, status.message());
}

template <typename T>
void IgnoreError(const Result<T>& result, std::string_view why) {
  IgnoreError(result.status(), why);
}

// For an error that matters but has no caller to go to (a background task, an error path
// that already reports another error): logged as a warning with `context`, "context: message".
inline void WarnIfError(const Status& status, std::string_view context) {
  if (!status.ok()) spdlog::warn("{}: {}", context, status.message());
}

}  // namespace adapt
