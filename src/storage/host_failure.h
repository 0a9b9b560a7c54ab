// An OS failure under the object store's root, as the object store's callers see it. Its
// message names host paths, and a full disk is the host's state, not the organization's quota:
// neither is a tenant's to read. adaptd's log keeps the failure; the caller gets one fixed
// sentence.
#pragma once

#include <utility>

#include "base/status.h"

namespace adapt::storage {

inline constexpr const char* kObjectStoreFailed = "the object store could not complete the request";

// Logs `os_failure` and returns Internal(kObjectStoreFailed).
Status HostFailure(const Status& os_failure);

// `st` unchanged when OK, else HostFailure(st).
inline Status HostSide(const Status& st) { return st.ok() ? st : HostFailure(st); }
template <typename T>
Result<T> HostSide(Result<T> r) {
  if (r.ok()) return r;
  return HostFailure(r.status());
}

}  // namespace adapt::storage
