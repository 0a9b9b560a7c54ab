// ImageStore: images pulled from OCI registries, on disk under one root:
//   blobs/sha256/<hex>   content-addressed blobs (manifests, configs, compressed layers),
//                        each verified while it streams and published by rename
//   layers/<hex>         each layer unpacked once, named by its diff id (the sha256 of its
//                        uncompressed tar, checked before it is published), read-only,
//                        shared by every image that has it, pulled or imported, whatever
//                        the compression it came in (stores made before diff ids named
//                        layers keep their older, blob-digest names in their refs)
//   refs/<hex>.json      what a key (core: an organization's reference, or an import) resolved
//                        to, named by the sha256 of the key
//   layers/commit-<hex>  a sandbox's writable layer saved as an image (Commit), named by
//                        the sha256 of its image's key (it has no tar, so no diff id); the
//                        prefix keeps it out of the diff ids' names (see LayerName)
//   proofs/<hex>         the diff id a compressed layer blob was found to unpack to: a layer
//                        stored already is shared with a pull or import only through a blob
//                        known to unpack to it
//   access/<hex>/<owner> that the owner (a pull key's first component: core's organization)
//                        has had blob <hex> served by its own registry, with its own
//                        credentials: a blob stored already is used for an owner only then
//   tmp/                 partial downloads and unpacks; emptied at start-up
// Concurrent pulls of one key share their work; an organization's blob downloads are shared
// with its own concurrent pulls only (never made to wait on another organization's registry),
// and the unpacking of one blob with every pull of it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "image/image_archive.h"
#include "image/layer_unpack.h"
#include "image/registry_client.h"
#include "image/registry_destination.h"
#include "image/singleflight.h"

namespace adapt::image {

struct StoredImage {
  std::string reference;                // the key it is stored under
  std::string digest;                   // the image manifest's
  std::string platform;                 // "linux/amd64"
  uint64_t size = 0;                    // compressed layer bytes
  nlohmann::json config;                // the image config blob
  std::vector<std::string> layer_dirs;  // base first
};

class ImageStore {
 public:
  // Pulls connect only where `destinations` allows (registry_destination.h).
  explicit ImageStore(std::string root, RegistryDestinations destinations = {});

  // Creates the directories and removes what an interrupted pull left in tmp/.
  Status Init();

  // The image last pulled or imported as `key`, when it is here.
  std::optional<StoredImage> Lookup(const std::string& key) const;

  // Pulls `reference` as `key`, fetching its manifest with `creds` (so each key proves its
  // own access) and reusing blobs (by digest, once the key's owner had its registry serve
  // them) and layers (by diff id, once proven) already here. `progress` gets (bytes downloaded,
  // bytes in all layers).
  using Progress = std::function<void(uint64_t, uint64_t)>;
  Result<StoredImage> Pull(const std::string& key, const std::string& reference,
                           const Credentials& creds, const Progress& progress = {});

  // Imports the image archive streamed from `source` (image_archive.h; `name` picks one of
  // several images) as `key`. The archive is staged under tmp/ and every blob checked, then
  // the new layers are unpacked, and only then are blobs and layers published (shared with
  // pulled images): a bad archive leaves nothing behind.
  struct Imported {
    StoredImage image;
    std::string format;  // "oci" or "docker"
    std::string name;    // the archive's name for it, "" when none
  };
  Result<Imported> ImportArchive(const std::string& key, const std::string& name,
                                 const ByteSource& source);

  // Stores as `key` the image `base` with one more layer on top: `fill(dir)` makes `dir` (a
  // path that does not exist yet) an overlay-format directory (whiteouts as 0/0 character
  // devices, opaque directories by xattr). `base` is a stored key (its layers are shared, not
  // copied) or a local image's root filesystem outside the store (never collected: the
  // operator's); `base.config` is the image config the new image shows. The layer is made in tmp/
  // and published by rename before the reference is written atomically: a crash leaves no
  // reference (tmp/ is swept at start-up, an unreferenced layer is collected).
  struct CommitBase {
    std::string key;           // a stored image's key, or
    std::string local_rootfs;  // a local image's root filesystem
    nlohmann::json config;     // the new image's config blob (the base's, kept)
  };
  using FillLayer = std::function<Status(const std::string& dir)>;
  Result<StoredImage> Commit(const std::string& key, const CommitBase& base, const FillLayer& fill);

  // Forgets every reference not in `keep()`, then removes the blobs and layers no remaining
  // reference uses. Waits for pulls and imports in progress and holds new ones off, and only
  // then asks `keep()`: a pull whose owner was recorded before it started is always kept
  // (asking before waiting would miss a pull that finished meanwhile). Returns what it removed.
  using KeepFn = std::function<Result<std::set<std::string>>()>;
  Result<std::vector<std::string>> CollectGarbage(const KeepFn& keep);

  // Number of blobs downloaded since start (tests of deduplication).
  uint64_t downloads() const { return downloads_; }
  void set_backoff_ms(int ms) { backoff_ms_ = ms; }
  // The free space a layer's unpack leaves on the store's filesystem beyond the layer's
  // compressed size (tests raise it to see the refusal).
  void set_free_space_margin(uint64_t bytes) { free_margin_ = bytes; }
  // The uncompressed bytes one pull or import may unpack or check (kMaxImageBytes; tests
  // lower it).
  void set_unpack_limit(uint64_t bytes) { unpack_limit_ = bytes; }
  static constexpr uint64_t kDefaultFreeSpaceMargin = 1ull << 30;

 private:
  std::string BlobPath(const std::string& digest) const;
  std::string LayerDir(const std::string& digest) const;
  Status MoveCommitLayers();
  std::string RefPath(const std::string& key) const;
  std::string ProofPath(const std::string& blob_digest) const;
  // Whether the layer blob `blob_digest` is known to unpack to `diff_id`.
  bool Proven(const std::string& blob_digest, const std::string& diff_id) const;
  // Checks (once, then remembered) that the layer blob at `blob` unpacks to `diff_id`. The
  // bytes it decompresses count against `budget`, as an unpack's do: a small zstd blob that
  // claims a stored layer's diff id would otherwise cost up to kMaxImageBytes of hashing for
  // each layer of the image that names it.
  Status CheckLayerBlob(const std::string& blob, const std::string& blob_digest,
                        const std::string& diff_id, UnpackBudget& budget);
  Status RecordProof(const std::string& blob_digest, const std::string& diff_id);
  std::string AccessPath(const std::string& owner, const std::string& blob_digest) const;
  bool HasAccess(const std::string& owner, const std::string& blob_digest) const;
  Status RecordAccess(const std::string& owner, const std::string& blob_digest);
  // The blob on disk, and served to `owner` by its registry: downloaded when missing, or
  // fetched once more (and only verified) when it was stored for another owner.
  Status EnsureBlob(RegistryClient& client, const std::string& owner, const Descriptor& d,
                    const std::function<void(uint64_t)>& progress);
  // Downloads (unless the layer `diff_id` is here already, and `owner` proved access to the
  // blob), checks and unpacks the layer.
  // Its unpack takes from `budget`, the image's.
  Status EnsureLayer(RegistryClient& client, const std::string& owner, const Descriptor& d,
                     const std::string& diff_id, UnpackBudget& budget,
                     const std::function<void(uint64_t)>& progress);
  // ResourceExhausted unless the store's filesystem has the layer's size plus the margin free.
  Status RoomForLayer(const Descriptor& d) const;
  // ResourceExhausted unless the host's disk has `bytes` and the margin free.
  Status RoomFor(uint64_t bytes, const std::string& what) const;
  // A budget whose entries are checked for room (RoomFor) as they are written.
  UnpackBudget Budget(const std::string& what) const;
  // Renames the unpacked `tmp` to the layer `diff_id`; when another unpack of the same
  // content got there first, removes `tmp` and keeps that one.
  Status PublishLayer(const std::string& tmp, const std::string& diff_id);
  Result<StoredImage> Publish(const std::string& key, const ArchiveImage& image);
  Status PutBlob(const std::string& digest, const std::string& content);
  std::string TempPath(const std::string& name);

  std::string root_;
  RegistryDestinations destinations_;
  Singleflight blobs_, layers_, pulls_;
  std::shared_mutex gc_mu_;  // pulls shared, garbage collection exclusive
  std::atomic<uint64_t> downloads_{0};
  std::atomic<uint64_t> tmp_seq_{0};
  int backoff_ms_ = 500;
  uint64_t unpack_limit_ = kMaxImageBytes;
  uint64_t free_margin_ = kDefaultFreeSpaceMargin;
};

}  // namespace adapt::image
