// Object keys: the names in an organization's object namespace. They never become paths
// (blobs are named at random), but clients map them to paths (awscli, rclone, sandboxes), so
// traversal-shaped keys are refused outright.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace adapt::storage {

constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxContentTypeBytes = 255;

// 1..1024 bytes of UTF-8 without control characters or backslashes; not starting with '/';
// no empty, "." or ".." segment, also after one more percent-decoding (%2e%2e, %2f).
Status ValidateObjectKey(std::string_view key, const std::string& field = "key");
// A list prefix: empty, or like a key but may end with '/'.
Status ValidateObjectPrefix(std::string_view prefix, const std::string& field = "prefix");
// Printable ASCII, up to 255 bytes; empty means application/octet-stream.
Status ValidateContentType(std::string_view type);

}  // namespace adapt::storage
