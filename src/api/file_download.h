// What the file routes share (/v1/sandboxes/{id}/files, /v1/storage/{name}/files): the path
// query, and a file read through core::FileReader (a sandbox's, through its agent; a volume's,
// from the host) as a download whose bytes stream from a thread of their own, its
// Adapt-Served-By header naming what served it.
#pragma once

#include <memory>
#include <string>

#include "api/http_types.h"
#include "core/file_service.h"

namespace adapt::api {

// Which path served a file operation: "agent", "runsc-exec" (as commands' servedBy says) or
// "storage".
constexpr const char* kServedByHeader = "Adapt-Served-By";

// The `path` query parameter of a file route: required, checked by core::ValidateFilePath.
Result<std::string> QueryFilePath(const HttpRequest& req);

// Streams `reader` to its end; dropping it early (the client left) kills a sandbox's agent.
HttpResponse FileDownload(std::unique_ptr<core::FileReader> reader, const std::string& type);

}  // namespace adapt::api
