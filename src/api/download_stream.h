// The one download pump: moves a source's bytes to the client from a thread of its own, with
// bounded memory whatever the client's speed. Object downloads, static sites and sandbox file
// downloads all stream through it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "api/http_types.h"
#include "base/status.h"
#include "os/durable_file.h"

namespace adapt::api {

struct DownloadSource {
  // Up to `n` bytes; 0 at the end; -1 when the source failed (logged, the body ends short).
  std::function<long(char* buf, size_t n)> read;
  // Called once the source said 0 (its end), for a source with an end of its own to confirm
  // (a sandbox agent's exit status); an error is logged. May be empty.
  std::function<Status()> finish;
  // The body's length when known (Content-Length); `read` must end there.
  std::optional<uint64_t> length;
  std::string what;  // names the download in log lines
};

// A `status` response whose body streams from `source`.
HttpResponse StreamDownload(DownloadSource source, const std::string& content_type,
                            int status = 200);

// A `status` response whose body is `length` bytes of `reader` from where it stands.
HttpResponse StreamFileResponse(std::unique_ptr<os::FileReader> reader, uint64_t length,
                                const std::string& content_type, int status = 200);

// Marks `r`, whose body and Content-Type a tenant chose (an object's), as a file to save, never
// a page of the API's origin, which is the dashboard's: a browser opening it downloads it
// (Content-Disposition: attachment, named after the last part of `key`), takes its type as
// given (nosniff), and would run nothing of it even if it rendered it (CSP sandbox). An HTML
// object served inline there ran its script with the signed-in user's session.
void MarkTenantFile(HttpResponse& r, const std::string& key);

}  // namespace adapt::api
