// Validating persistent storage requests: names, sizes, delete confirmations.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace adapt::storage {

// Every organization has this volume; it cannot be deleted.
inline constexpr const char* kDefaultVolumeName = "default";

namespace limits {
// Smaller ext4 filesystems leave too little room beside their journal and metadata.
inline constexpr int64_t kSizeMiBMin = 64;
// The same ceiling as a sandbox's diskMiB (seed 001): images are sparse until written.
inline constexpr int64_t kSizeMiBMax = 131072;
inline constexpr int64_t kSizeMiBDefault = 2048;
inline constexpr size_t kNameMaxBytes = 63;
// Volumes an organization may hold, the default one included.
inline constexpr size_t kVolumesPerOrg = 32;
}  // namespace limits

struct CreateVolumeRequest {
  std::string name;
  int64_t size_mib = limits::kSizeMiBDefault;
};

// A name is 1..63 of [a-z0-9-], starting and ending with a letter or digit (a DNS label), so
// it is safe in paths, URLs and command lines. `field` names the field in the error.
Status ValidateVolumeName(const std::string& name, const std::string& field = "name");

// POST /v1/storage: {"name": "...", "sizeMiB": 2048}.
Result<CreateVolumeRequest> ParseCreateVolume(const nlohmann::json& body);

// DELETE /v1/storage/{name}: the confirmation must be exactly the name.
Status CheckDeleteConfirmation(const std::string& name, const std::string& confirm);

}  // namespace adapt::storage
