// GPU types (seed 000's list_gpu_types, GET /v1/gpu-types, `adapt gpu ls`): the GPU models
// new GPU sandboxes can have. This host has none: Debian's runsc has no GPU passthrough
// (--nvproxy), so the list is empty and says why, and a GPU sandbox is refused with the same
// reason (ValidateCreateSandbox). Nothing is faked.
#pragma once

#include <string>
#include <vector>

namespace adapt::core {

struct GpuType {
  std::string type;  // what a create's gpu.type names
  double memory_gib = 0;
};

struct GpuTypeCatalog {
  std::vector<GpuType> gpu_types;
  std::string explanation;  // what the list means here
};

// Why this host runs no GPU sandbox, as one sentence.
extern const char* const kNoGpuReason;

GpuTypeCatalog ListGpuTypes();

}  // namespace adapt::core
