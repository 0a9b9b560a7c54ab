#include "core/gpu_types.h"

namespace adapt::core {

const char* const kNoGpuReason =
    "this host has no GPUs that sandboxes can use (its gVisor runtime has no GPU passthrough)";

GpuTypeCatalog ListGpuTypes() {
  return {{}, std::string("No GPU types: ") + kNoGpuReason + "; create CPU sandboxes instead."};
}

}  // namespace adapt::core
