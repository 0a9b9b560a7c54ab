// Persistent storage's typed requests and views, and their validation: names, sizes, delete
// confirmations. Errors name fields as these structs do (`size_mib`); api/ and mcp/ map them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
  std::optional<int64_t> size_mib;  // kSizeMiBDefault when absent
};

struct VolumeAttachment {
  std::string sandbox_id;
  std::string status;
};

struct Volume {
  std::string id;
  std::string name;
  int64_t size_mib = 0;
  std::optional<uint64_t> used_bytes, available_bytes;  // unknown while it cannot be read
  std::string status;
  bool is_default = false;
  bool encrypted = true;
  std::string mount_path;  // where a durable sandbox sees it
  std::vector<VolumeAttachment> attachments;
  int64_t created_at = 0;  // ms since the epoch
};

// One newest-first page (API.md's lists); at most limits::kVolumesPerOrg exist, so the
// default first page holds them all.
struct VolumeList {
  std::vector<Volume> items;
  std::optional<std::string> next_cursor;  // unset on the last page
};

// A name is 1..63 of [a-z0-9-], starting and ending with a letter or digit (a DNS label), so
// it is safe in paths, URLs and command lines. `field` names the field in the error.
Status ValidateVolumeName(const std::string& name, const std::string& field = "name");

// Checks the name and the size (field "size_mib": kSizeMiBMin..kSizeMiBMax) and fills the
// default size.
Result<CreateVolumeRequest> CheckCreateVolume(CreateVolumeRequest request);

// DELETE /v1/storage/{name}: the confirmation must be exactly the name.
Status CheckDeleteConfirmation(const std::string& name, const std::string& confirm);

}  // namespace adapt::storage
