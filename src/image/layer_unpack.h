// Unpacks one image layer (a tar, plain, gzip or zstd) into a directory that overlayfs can
// stack as a lower layer. OCI whiteouts become overlayfs whiteouts: ".wh.NAME" a 0/0
// character device NAME, ".wh..wh..opq" the trusted.overlay.opaque xattr on its directory.
// So layers stay separate (and shared between images) instead of being flattened.
// Ownership, permissions, times and xattrs are kept. An entry that would land outside the
// directory ("..", a path through a symlink, a hard link to outside) fails the unpack.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace adapt::image {

// `dir` must exist and be empty. On error, `dir` holds a partial unpack the caller removes.
// `max_bytes` bounds the unpacked size (seed 001's 32 GiB image-build limit).
Status UnpackLayer(const std::string& archive_path, const std::string& dir, uint64_t max_bytes,
                   const std::string& what);

// The sha256 of the layer's uncompressed tar stream ("sha256:<hex>"): its diff id, what
// the image config's rootfs.diff_ids names it by. Layers are stored by diff id, so a layer
// must be checked against it before it is published under that name.
Result<std::string> UncompressedDigest(const std::string& archive_path, const std::string& what);

}  // namespace adapt::image
