// Streaming file transfers for `adapt sandbox cp`: a local file sent as a request body and a
// response body written to a local file, through libcurl without holding either in memory;
// and tar archives of local directories through libarchive (in a temporary file).
#pragma once

#include <cstdio>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"

namespace adapt::cli {

// PUTs the file open as `in` (of `size` bytes) to `path`; the answer, errors included.
Result<HttpResponse> PutStream(const ApiClient& client, const std::string& path, FILE* in,
                               long long size, const std::string& content_type);
// POSTs the file open as `in` (of `size` bytes) to `path` (adapt image import), with `headers`.
Result<HttpResponse> PostStream(const ApiClient& client, const std::string& path, FILE* in,
                                long long size, const std::string& content_type,
                                const HeaderList& headers = {});
// GETs `path` into `out` when the status is below 400; an error answer's body is returned
// in the response instead.
Result<HttpResponse> GetStream(const ApiClient& client, const std::string& path, FILE* out);
// GETs `path` into the file `local` (`adapt sandbox cp`, `adapt object get`): written as
// `<local>.adapt-part` and renamed at the end, so a failed download leaves nothing behind;
// the server's error otherwise.
Status DownloadToFile(const ApiClient& client, const std::string& path, const std::string& local);

// Writes a tar of the contents of directory `dir` into `out` (entries relative to `dir`).
Status WriteDirectoryTar(const std::string& dir, FILE* out);
// Extracts the tar in `in` under directory `dir` (created), refusing absolute names, ".."
// and links leaving `dir`.
Status ExtractTar(FILE* in, const std::string& dir);

}  // namespace adapt::cli
