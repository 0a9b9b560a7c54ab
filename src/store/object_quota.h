// The one sentence for an organization's object quota, whichever store or layer finds it
// passed: its objects and site and app releases share the quota.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace adapt::store {

inline Status ObjectQuotaExceeded(uint64_t would_hold, uint64_t limit) {
  return Status(Code::kResourceExhausted,
                "object storage quota exceeded: the organization's objects and releases would "
                "hold " +
                    std::to_string(would_hold) + " bytes, the limit is " + std::to_string(limit));
}

}  // namespace adapt::store
