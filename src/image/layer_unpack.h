// Unpacks one image layer (a tar, plain, gzip or zstd) into a directory that overlayfs can
// stack as a lower layer. OCI whiteouts become overlayfs whiteouts: ".wh.NAME" a 0/0
// character device NAME, ".wh..wh..opq" the trusted.overlay.opaque xattr on its directory.
// So layers stay separate (and shared between images) instead of being flattened.
// Ownership, permissions, times and xattrs are kept, but not the xattrs the host reads
// (trusted.*, security.* but security.capability), and no device node but the 0/0 character
// device of a whiteout is made: adaptd unpacks as root, onto the host's filesystem. An entry
// that would land outside the directory ("..", a path through a symlink, a hard link to
// outside) fails the unpack.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "image/manifest.h"

namespace adapt::image {

// A layer with more entries than this is refused: each is an inode on the host and a step of
// the unpack. The largest images we know (full distributions with toolchains) have a few
// hundred thousand files in all.
inline constexpr uint64_t kMaxLayerEntries = 1'000'000;

// Whiteouts and opaque markers are applied after a layer's other entries, so their names are
// held in memory until then: at most this many bytes of names per layer.
inline constexpr uint64_t kMaxWhiteoutNameBytes = 16 << 20;

// What the layers that one pull or import unpacks may hold together (seed 001's 32 GiB
// image-build limit): each unpack takes its layer's uncompressed tar size out of it, so that an
// image of many layers cannot write layers x 32 GiB. Layers stored already are not unpacked
// again and take nothing. The caps per layer are constants but for tests.
struct UnpackBudget {
  uint64_t bytes_left = kMaxImageBytes;
  uint64_t max_layer_entries = kMaxLayerEntries;
  uint64_t max_whiteout_name_bytes = kMaxWhiteoutNameBytes;
  // Asked before each entry is written, with its size: an error (no room on the host's disk
  // for it) fails the unpack. Unset: every entry has room. A layer's compressed size, all
  // that is known before, says nothing of what it unpacks to (a megabyte of zstd can be
  // gigabytes of zeros).
  std::function<Status(uint64_t bytes)> room;
};

// `dir` must exist and be empty. On error, `dir` holds a partial unpack the caller removes.
// Every entry's bytes count against `budget`, whiteouts and skipped entries too (they are
// decompressed all the same); an entry that would take it past 0 is refused before it is
// written. On success `budget` has lost what this layer's tar holds.
Status UnpackLayer(const std::string& archive_path, const std::string& dir, UnpackBudget& budget,
                   const std::string& what);

// The sha256 of the layer's uncompressed tar stream ("sha256:<hex>"): its diff id, what
// the image config's rootfs.diff_ids names it by. Layers are stored by diff id, so a layer
// must be checked against it before it is published under that name. A stream of more than
// `max_bytes` is refused as soon as it gets there (a small zstd blob can decompress to a
// terabyte of zeros).
// `*hashed`, when given, gets how many uncompressed bytes were read.
Result<std::string> UncompressedDigest(const std::string& archive_path, uint64_t max_bytes,
                                       const std::string& what, uint64_t* hashed = nullptr);

}  // namespace adapt::image
