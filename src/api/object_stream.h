// Streams a byte range of a file (an object's blob) to the client from a thread of its own,
// with bounded memory whatever the client's speed.
#pragma once

#include <memory>
#include <string>

#include "api/http_types.h"
#include "os/durable_file.h"

namespace adapt::api {

// A `status` response whose body is `length` bytes of `reader` from where it stands.
HttpResponse StreamFileResponse(std::unique_ptr<os::FileReader> reader, uint64_t length,
                                const std::string& content_type, int status = 200);

}  // namespace adapt::api
