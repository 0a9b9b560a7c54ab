// Stages an uploaded tar archive (an image archive: an OCI image layout or a `docker save`
// tarball) on disk as it streams in: each regular file is written to its own file in a
// staging directory while its sha256 and size are computed, links are remembered. Memory
// stays flat whatever the archive's size; nothing is trusted yet (image_archive.h checks the
// digests against the manifests). The archive may be plain, gzip or zstd compressed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "base/archive_path.h"  // CleanArchivePath
#include "base/status.h"

namespace adapt::image {

// Reads up to `n` bytes into `buf`: the count, 0 at the end, -1 when the upload failed.
using ByteSource = std::function<long(char* buf, size_t n)>;

struct StagedFile {
  std::string path;    // where it was staged
  std::string digest;  // "sha256:<hex>" of its content
  uint64_t size = 0;
};

struct StagedArchive {
  std::map<std::string, StagedFile> files;   // clean archive path ("blobs/sha256/ab..") -> file
  std::map<std::string, std::string> links;  // symlink or hard link path -> clean target path
  uint64_t bytes = 0;                        // of all regular files

  // The file at archive path `name`, following links; nullptr when there is none.
  const StagedFile* Find(const std::string& name) const;
};

// Reads the whole archive from `source` into `dir` (which must exist and be empty). Errors are
// InvalidArgument naming the "archive" (PayloadTooLarge past `max_bytes`); on error `dir`
// holds what was staged, for the caller to remove. `room`, when set, is asked before each
// file and each kRoomCheckBytes written whether the host's disk has room for that much more;
// its error ends the staging (an upload's size says nothing of what a compressed archive, or
// a sparse entry, writes).
inline constexpr uint64_t kRoomCheckBytes = 64 << 20;
Result<StagedArchive> StageArchive(const ByteSource& source, const std::string& dir,
                                   uint64_t max_bytes,
                                   const std::function<Status(uint64_t bytes)>& room = {});

}  // namespace adapt::image
