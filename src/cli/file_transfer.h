// Streaming file transfers for `adapt sandbox cp`: a local file sent as a request body and a
// response body written to a local file, through libcurl without holding either in memory;
// and tar archives of local directories through libarchive (in a temporary file).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

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
// GETs `path` into the file `local` (`adapt sandbox cp`, `adapt object get`): written to a new
// file `<local>.adapt-part-XXXXXX` (never one that exists) and renamed at the end, so a failed
// download leaves nothing behind; the server's error otherwise.
Status DownloadToFile(const ApiClient& client, const std::string& path, const std::string& local);

// Writes a tar of the contents of directory `dir` into `out` (entries relative to `dir`).
Status WriteDirectoryTar(const std::string& dir, FILE* out);
// Extracts the tar in `in` under directory `dir` (created), refusing absolute names, "..",
// hard links leaving `dir` and entries that are not files, directories or links; a symbolic
// link that leaves `dir` (absolute, or climbing above it, read lexically) is not made but
// named in `*skipped`. Modes are the entries' less the umask, without setuid, setgid or
// sticky bits.
Status ExtractTar(FILE* in, const std::string& dir, std::vector<std::string>* skipped = nullptr);

}  // namespace adapt::cli
