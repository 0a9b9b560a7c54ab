#include "storage/host_failure.h"

#include "base/log.h"

namespace adapt::storage {

Status HostFailure(const Status& os_failure) {
  spdlog::error("object store: {}", os_failure.message());
  return Internal(kObjectStoreFailed);
}

}  // namespace adapt::storage
