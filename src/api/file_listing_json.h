// A directory's listing as the API answers it, {items, path}, written as text: a listing of
// hundreds of thousands of entries (up to the file tool's reply limit of 64 MiB, whatever the
// sandbox says) as a tree of nlohmann values would take ten times its text.
#pragma once

#include <string>

#include "core/file_service.h"

namespace adapt::api {

// Byte for byte what JsonResponse writes for the same listing as nlohmann values
// (docs/openapi.yaml's FileListing).
std::string FileListingJsonText(const core::FileListing& listing);

}  // namespace adapt::api
