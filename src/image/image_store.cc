#include "image/image_store.h"

#include <unistd.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/fault_point.h"
#include "base/ignore_error.h"
#include "base/text.h"
#include "image/digest.h"
#include "image/layer_unpack.h"
#include "image/reference.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/tree_copy.h"

namespace adapt::image {
namespace {

using nlohmann::json;

std::string Hex(const std::string& digest) { return digest.substr(digest.find(':') + 1); }

// A layer's name under layers/: its diff id's hex, or "commit-<hex>" for a commit's. The two
// must never meet: a commit's hex is the sha256 of its image's key ("import:img_..."), which
// anyone can compute, and an import whose config named that as a diff id, with a layer blob
// of those very bytes (a blob is its own proof when its digest is the diff id), was handed the
// other organization's saved layer.
constexpr std::string_view kCommitPrefix = "commit:";
std::string LayerName(const std::string& layer) {
  if (layer.starts_with(kCommitPrefix)) return "commit-" + layer.substr(kCommitPrefix.size());
  return Hex(layer);
}

bool IsSha256Digest(const json& d) {
  if (!d.is_string()) return false;
  const std::string& s = d.get_ref<const std::string&>();
  if (s.size() != 7 + 64 || !s.starts_with("sha256:")) return false;
  for (size_t i = 7; i < s.size(); ++i) {
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
  }
  return true;
}

// The config's rootfs.diff_ids: one sha256 per layer, base first. Layers are stored by these,
// so the same layer is stored once whether it came compressed from a registry or plain from a
// docker save archive.
Result<std::vector<std::string>> DiffIds(const json& config, size_t layers,
                                         const std::string& what) {
  const json& rootfs = config.contains("rootfs") ? config["rootfs"] : json();
  json ids = rootfs.is_object() && rootfs.contains("diff_ids") ? rootfs["diff_ids"] : json();
  if (!ids.is_array() || ids.size() != layers)
    return InvalidArgument("image", what + " has " + std::to_string(layers) +
                                        " layers but its config's rootfs.diff_ids lists " +
                                        std::to_string(ids.is_array() ? ids.size() : 0));
  std::vector<std::string> out;
  for (const auto& id : ids) {
    if (!IsSha256Digest(id))
      return InvalidArgument("image", what + "'s config has a diff id that is not a sha256 digest");
    out.push_back(id.get<std::string>());
  }
  return out;
}

// Unpacks the layer blob at `blob` into the empty directory `dir` after checking that its
// uncompressed content is `diff_id` (a plain tar's blob digest already is).
Status UnpackChecked(const std::string& blob, const std::string& blob_digest,
                     const std::string& diff_id, const std::string& dir, UnpackBudget& budget) {
  std::string what = "layer " + blob_digest;
  if (blob_digest != diff_id) {
    ASSIGN_OR_RETURN(std::string got, UncompressedDigest(blob, budget.bytes_left, what));
    if (got != diff_id)
      return InvalidArgument("image", what + " does not match the config's diff id " + diff_id +
                                          " (its uncompressed content is " + got + ")");
  }
  return UnpackLayer(blob, dir, budget, what);
}

// The key under which one owner's fetches of one blob are deduplicated.
std::string FetchKey(const std::string& owner, const std::string& digest) {
  return owner + "\n" + digest;
}

}  // namespace

ImageStore::ImageStore(std::string root, RegistryDestinations destinations)
    : root_(std::move(root)), destinations_(std::move(destinations)) {}

Status ImageStore::Init() {
  for (const char* sub : {"blobs/sha256", "layers", "refs", "proofs", "access"})
    RETURN_IF_ERROR(os::MakeDirs(root_ + "/" + sub, 0700));
  // Partial downloads and unpacks of a pull that was interrupted.
  RETURN_IF_ERROR(os::RemoveTree(root_ + "/tmp"));
  RETURN_IF_ERROR(os::MakeDirs(root_ + "/tmp", 0700));
  return MoveCommitLayers();
}

// A store made before commits had names of their own (LayerName) keeps each commit's layer
// at layers/<hex>: moved to layers/commit-<hex>. An import that had taken such a layer as a
// diff id's is left pointing at nothing, and is pulled or imported again.
Status ImageStore::MoveCommitLayers() {
  for (const auto& name : os::ListDir(root_ + "/refs")) {
    auto text = os::ReadFile(root_ + "/refs/" + name);
    if (!text.ok()) continue;
    json rec = json::parse(*text, nullptr, false);
    if (!rec.is_object() || !rec.contains("layers") || !rec["layers"].is_array()) continue;
    for (const auto& l : rec["layers"]) {
      if (!l.is_string() || !l.get_ref<const std::string&>().starts_with(kCommitPrefix)) continue;
      const std::string& layer = l.get_ref<const std::string&>();
      std::string old_dir = root_ + "/layers/" + Hex(layer);
      if (os::Exists(LayerDir(layer)) || !os::Exists(old_dir)) continue;
      RETURN_IF_ERROR(os::Rename(old_dir, LayerDir(layer)).WithContext("moving a commit's layer"));
    }
  }
  return Status::Ok();
}

std::string ImageStore::BlobPath(const std::string& d) const {
  return root_ + "/blobs/sha256/" + Hex(d);
}
std::string ImageStore::LayerDir(const std::string& d) const {
  return root_ + "/layers/" + LayerName(d);
}
std::string ImageStore::RefPath(const std::string& reference) const {
  return root_ + "/refs/" + Hex(Sha256Of(reference)) + ".json";
}
std::string ImageStore::ProofPath(const std::string& blob_digest) const {
  return root_ + "/proofs/" + Hex(blob_digest);
}

bool ImageStore::Proven(const std::string& blob_digest, const std::string& diff_id) const {
  // A plain tar's digest is its diff id; a compressed one was unpacked (or checked) once.
  if (blob_digest == diff_id) return true;
  auto proven = os::ReadFile(ProofPath(blob_digest));
  return proven.ok() && *proven == diff_id;
}

Status ImageStore::CheckLayerBlob(const std::string& blob, const std::string& blob_digest,
                                  const std::string& diff_id, UnpackBudget& budget) {
  if (Proven(blob_digest, diff_id)) return Status::Ok();
  std::string what = "layer " + blob_digest;
  uint64_t hashed = 0;
  ASSIGN_OR_RETURN(std::string got, UncompressedDigest(blob, budget.bytes_left, what, &hashed));
  budget.bytes_left -= hashed;
  if (got != diff_id)
    return InvalidArgument("image", what + " does not match the config's diff id " + diff_id +
                                        " (its uncompressed content is " + got + ")");
  return RecordProof(blob_digest, diff_id);
}

Status ImageStore::RecordProof(const std::string& blob_digest, const std::string& diff_id) {
  if (blob_digest == diff_id) return Status::Ok();
  return os::WriteFileAtomic(ProofPath(blob_digest), diff_id, 0600);
}

std::string ImageStore::TempPath(const std::string& name) {
  return root_ + "/tmp/" + name + "." + std::to_string(getpid()) + "." + std::to_string(tmp_seq_++);
}

std::optional<StoredImage> ImageStore::Lookup(const std::string& reference) const {
  auto text = os::ReadFile(RefPath(reference));
  if (!text.ok()) return std::nullopt;
  try {
    auto j = json::parse(*text);
    StoredImage img;
    img.reference = j.at("reference");
    img.digest = j.at("digest");
    img.platform = j.at("platform");
    img.size = j.at("size");
    img.config = j.at("config");
    // A commit on a local image: the operator's root filesystem is its base layer.
    if (j.contains("local_base")) {
      std::string base = j.at("local_base");
      if (!os::Exists(base)) return std::nullopt;
      img.layer_dirs.push_back(base);
    }
    for (const auto& l : j.at("layers")) {
      std::string dir = LayerDir(l.get<std::string>());
      if (!os::Exists(dir)) return std::nullopt;  // collected since: pull again
      img.layer_dirs.push_back(dir);
    }
    return img;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Status ImageStore::PutBlob(const std::string& digest, const std::string& content) {
  if (os::Exists(BlobPath(digest))) return Status::Ok();
  return os::WriteFileAtomic(BlobPath(digest), content, 0600);
}

std::string ImageStore::AccessPath(const std::string& owner, const std::string& blob_digest) const {
  return root_ + "/access/" + Hex(blob_digest) + "/" + Hex(Sha256Of(owner));
}

bool ImageStore::HasAccess(const std::string& owner, const std::string& blob_digest) const {
  return os::Exists(AccessPath(owner, blob_digest));
}

Status ImageStore::RecordAccess(const std::string& owner, const std::string& blob_digest) {
  RETURN_IF_ERROR(os::MakeDirs(root_ + "/access/" + Hex(blob_digest), 0700));
  return os::WriteFileAtomic(AccessPath(owner, blob_digest), "", 0600);
}

Status ImageStore::EnsureBlob(RegistryClient& client, const std::string& owner, const Descriptor& d,
                              const std::function<void(uint64_t)>& progress) {
  // Deduplicated per owner: a pull waiting on another organization's fetch would wait on that
  // organization's registry (slow on purpose, perhaps) and take its error, which names it.
  // Two owners fetching one new blob each download it, each from its own registry (the second
  // would have had to prove its access by downloading it anyway); renaming the same verified
  // bytes over each other is harmless. A waiter whose fetch failed (perhaps another of the
  // owner's registries) fetches through its own.
  RETURN_IF_ERROR(blobs_.Do(
      FetchKey(owner, d.digest),
      [&]() -> Status {
        if (os::Exists(BlobPath(d.digest))) return Status::Ok();
        std::string tmp = TempPath(Hex(d.digest));
        RETURN_IF_ERROR(client.GetBlob(d, tmp, progress));
        ++downloads_;
        RETURN_IF_ERROR(os::Rename(tmp, BlobPath(d.digest)));
        return RecordAccess(owner, d.digest);
      },
      Singleflight::OnFailure::kRetry));
  if (HasAccess(owner, d.digest)) return Status::Ok();
  // Here already, but fetched for another owner (or before owners were recorded): a digest
  // named in a manifest proves nothing, since another organization's private layer is
  // named by its digest just the same. The owner's registry must serve the bytes themselves.
  // Its error is the one a blob not stored gets: saying that the blob is stored would tell this
  // owner that another organization has it.
  RETURN_IF_ERROR(client.VerifyBlob(d, progress));
  ++downloads_;
  return RecordAccess(owner, d.digest);
}

Status ImageStore::RoomForLayer(const Descriptor& d) const {
  // The compressed size is all that is known before unpacking; each entry is checked again
  // as it is written (UnpackBudget::room).
  return RoomFor(d.size, "layer " + d.digest);
}

Status ImageStore::RoomFor(uint64_t bytes, const std::string& what) const {
  ASSIGN_OR_RETURN(os::FilesystemUsage usage, os::GetFilesystemUsage(root_ + "/tmp"));
  // The margin keeps the state filesystem (sandboxes' disks, the database) from being filled
  // by an image.
  uint64_t need = bytes > UINT64_MAX - free_margin_ ? UINT64_MAX : bytes + free_margin_;
  if (usage.avail_bytes >= need) return Status::Ok();
  return Status(Code::kResourceExhausted,
                "the host has too little free space to unpack " + what + " (adaptd keeps " +
                    std::to_string(free_margin_ >> 20) + " MiB free); try again later",
                "image");
}

UnpackBudget ImageStore::Budget(const std::string& what) const {
  UnpackBudget budget;
  budget.bytes_left = unpack_limit_;
  budget.room = [this, what](uint64_t bytes) { return RoomFor(bytes, what); };
  return budget;
}

Status ImageStore::PublishLayer(const std::string& tmp, const std::string& diff_id) {
  Status st = os::Rename(tmp, LayerDir(diff_id));
  if (st.ok() || !os::Exists(LayerDir(diff_id))) return st;
  // Another pull or import (another blob of the same content) published it first: the
  // content is the same, proven by its diff id.
  IgnoreError(os::RemoveTree(tmp), "tmp/ is swept at start-up");
  return Status::Ok();
}

Status ImageStore::EnsureLayer(RegistryClient& client, const std::string& owner,
                               const Descriptor& d, const std::string& diff_id,
                               UnpackBudget& budget,
                               const std::function<void(uint64_t)>& progress) {
  // The layer is here already (pulled or imported, by anyone, in any compression): shared
  // only once this blob is known to unpack to it, or an image whose config merely claims
  // another image's diff id would be handed that image's layer; and only with an owner whose
  // registry served this blob (EnsureBlob).
  auto reuse = [&]() -> Status {
    if (Proven(d.digest, diff_id) && HasAccess(owner, d.digest)) return Status::Ok();
    RETURN_IF_ERROR(EnsureBlob(client, owner, d, progress));
    return CheckLayerBlob(BlobPath(d.digest), d.digest, diff_id, budget);
  };
  if (os::Exists(LayerDir(diff_id))) return reuse();
  RETURN_IF_ERROR(EnsureBlob(client, owner, d, progress));
  // Unpacking is local work on bytes this owner's registry served, shared with concurrent pulls
  // of the same blob, whoever's. A pull whose wait ends in the other's failure (its image's
  // budget, a full disk) unpacks for itself.
  bool unpacked = false;
  RETURN_IF_ERROR(layers_.Do(
      diff_id + "\n" + d.digest,
      [&]() -> Status {
        if (os::Exists(LayerDir(diff_id))) return Status::Ok();
        RETURN_IF_ERROR(RoomForLayer(d));
        std::string tmp = TempPath("layer-" + Hex(diff_id));
        RETURN_IF_ERROR(os::MakeDirs(tmp, 0755));
        Status st = UnpackChecked(BlobPath(d.digest), d.digest, diff_id, tmp, budget);
        if (st.ok()) st = RecordProof(d.digest, diff_id);
        if (st.ok()) st = PublishLayer(tmp, diff_id);
        if (!st.ok()) IgnoreError(os::RemoveTree(tmp), "tmp/ is swept at start-up");
        unpacked = st.ok();
        return st;
      },
      Singleflight::OnFailure::kRetry));
  // A concurrent pull of this diff id (another owner's, perhaps with another blob) may have
  // done the work this call waited on: this pull's blob and owner are checked on their own.
  return unpacked ? Status::Ok() : reuse();
}

Result<StoredImage> ImageStore::Pull(const std::string& key, const std::string& reference,
                                     const Credentials& creds, const Progress& progress) {
  ASSIGN_OR_RETURN(ImageReference ref, ParseReference(reference));
  std::shared_lock gc_lock(gc_mu_);
  std::vector<std::string> blobs;
  // Concurrent pulls of one key share the work; of one reference under two keys (two
  // organizations) they do not, each proving its own access to the manifest.
  // Who pulls: the key's first component (core: the organization).
  const std::string owner = key.substr(0, key.find('/'));
  Status st = pulls_.Do(key, [&]() -> Status {
    RegistryClient client(ref, creds, destinations_);
    client.set_backoff_ms(backoff_ms_);
    ASSIGN_OR_RETURN(FetchedManifest fetched, client.GetManifest(ref.ManifestRef()));
    ASSIGN_OR_RETURN(Manifest m, ParseManifest(fetched.body, fetched.content_type));
    std::string platform = "linux/amd64";
    if (m.is_index) {
      RETURN_IF_ERROR(PutBlob(fetched.digest, fetched.body));
      blobs.push_back(fetched.digest);
      ASSIGN_OR_RETURN(Descriptor chosen, PickPlatform(m, reference));
      ASSIGN_OR_RETURN(fetched, client.GetManifest(chosen.digest));
      ASSIGN_OR_RETURN(m, ParseManifest(fetched.body, fetched.content_type));
      if (m.is_index)
        return Unsupported("image", "image '" + reference + "' nests an index in an index");
    }
    RETURN_IF_ERROR(EnsureBlob(client, owner, m.config, {}));
    ASSIGN_OR_RETURN(std::string config_text, os::ReadFile(BlobPath(m.config.digest)));
    ASSIGN_OR_RETURN(json config, ParseImageConfig(config_text, "image '" + reference + "'"));
    ASSIGN_OR_RETURN(auto diff_ids, DiffIds(config, m.layers.size(), "image '" + reference + "'"));
    uint64_t total = m.TotalLayerBytes(), done = 0;
    std::mutex progress_mu;
    UnpackBudget budget = Budget("image '" + reference + "'");
    for (size_t i = 0; i < m.layers.size(); ++i) {
      const Descriptor& layer = m.layers[i];
      uint64_t before = done;
      RETURN_IF_ERROR(EnsureLayer(client, owner, layer, diff_ids[i], budget, [&](uint64_t n) {
        std::lock_guard lock(progress_mu);
        if (progress) progress(before + n, total);
      }));
      done = before + layer.size;
      if (progress) progress(done, total);
    }
    RETURN_IF_ERROR(PutBlob(fetched.digest, fetched.body));
    json rec = {{"reference", key}, {"digest", fetched.digest}, {"platform", platform},
                {"size", total},    {"config", config},         {"layers", json::array()}};
    for (const auto& id : diff_ids) rec["layers"].push_back(id);
    blobs.push_back(fetched.digest);
    blobs.push_back(m.config.digest);
    for (const auto& l : m.layers) blobs.push_back(l.digest);
    rec["blobs"] = blobs;
    return os::WriteFileAtomic(
        RefPath(key), rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0600);
  });
  if (!st.ok()) return st;
  auto img = Lookup(key);
  if (!img) return Internal("image '" + reference + "' vanished right after its pull");
  return *img;
}

Result<ImageStore::Imported> ImageStore::ImportArchive(const std::string& key,
                                                       const std::string& name,
                                                       const ByteSource& source) {
  std::string dir = TempPath("import");
  RETURN_IF_ERROR(os::MakeDirs(dir, 0700));
  auto imported = [&]() -> Result<Imported> {
    // The layers may be 32 GiB; manifests, configs and the layout around them are small.
    ASSIGN_OR_RETURN(StagedArchive staged,
                     StageArchive(source, dir, kMaxImageBytes + (64 << 20),
                                  [this](uint64_t n) { return RoomFor(n, "the image archive"); }));
    ASSIGN_OR_RETURN(ArchiveImage image, ReadImageArchive(staged, name));
    ASSIGN_OR_RETURN(StoredImage stored, Publish(key, image));
    return Imported{stored, image.format, image.name};
  }();
  IgnoreError(os::RemoveTree(dir), "tmp/ is swept at start-up");
  return imported;
}

Result<StoredImage> ImageStore::Publish(const std::string& key, const ArchiveImage& image) {
  std::shared_lock gc_lock(gc_mu_);
  std::string what =
      image.name.empty() ? "the archive's image" : "image '" + PrintableAscii(image.name) + "'";
  ASSIGN_OR_RETURN(auto diff_ids, DiffIds(image.config, image.layers.size(), what));
  // Unpack the layers not here yet, each into tmp/, before publishing anything.
  std::map<std::string, std::string> unpacked;  // diff id -> tmp dir
  UnpackBudget budget = Budget(what);
  auto discard = [&] {
    for (const auto& [_, dir] : unpacked)
      IgnoreError(os::RemoveTree(dir), "tmp/ is swept at start-up");
  };
  for (size_t i = 0; i < image.layers.size(); ++i) {
    const Descriptor& layer = image.layers[i];
    const std::string& diff_id = diff_ids[i];
    const std::string& blob = image.blob_files.at(layer.digest);
    if (unpacked.count(diff_id)) {
      // The same diff id twice in one image: each blob must unpack to it.
      Status st = CheckLayerBlob(blob, layer.digest, diff_id, budget);
      if (!st.ok()) {
        discard();
        return st;
      }
      continue;
    }
    if (os::Exists(LayerDir(diff_id))) {
      // Stored already: shared only with a blob that unpacks to it (see EnsureLayer).
      Status st = CheckLayerBlob(blob, layer.digest, diff_id, budget);
      if (!st.ok()) {
        discard();
        return st;
      }
      continue;
    }
    std::string tmp = TempPath("layer-" + Hex(diff_id));
    unpacked[diff_id] = tmp;
    Status st = RoomForLayer(layer);
    if (st.ok()) st = os::MakeDirs(tmp, 0755);
    if (st.ok()) st = UnpackChecked(blob, layer.digest, diff_id, tmp, budget);
    if (st.ok()) st = RecordProof(layer.digest, diff_id);
    if (!st.ok()) {
      discard();
      return st;
    }
  }
  json rec = {{"reference", key},
              {"digest", image.manifest_digest},
              {"platform", "linux/amd64"},
              {"size", 0},
              {"config", image.config},
              {"layers", json::array()},
              {"blobs", json::array({image.manifest_digest})}};
  uint64_t total = 0;
  for (const auto& blob_file : image.blob_files) {
    // Named copies of the pair's references: clang 14 cannot capture structured bindings.
    const std::string& digest = blob_file.first;
    const std::string& path = blob_file.second;
    RETURN_IF_ERROR(blobs_.Do(digest, [&]() -> Status {
      if (os::Exists(BlobPath(digest))) return Status::Ok();
      return os::Rename(path, BlobPath(digest));
    }));
    rec["blobs"].push_back(digest);
  }
  RETURN_IF_ERROR(PutBlob(image.manifest_digest, image.manifest));
  for (size_t i = 0; i < image.layers.size(); ++i) {
    const std::string& diff_id = diff_ids[i];
    total += image.layers[i].size;
    rec["layers"].push_back(diff_id);
    auto it = unpacked.find(diff_id);
    if (it == unpacked.end() || os::Exists(LayerDir(diff_id))) continue;
    RETURN_IF_ERROR(PublishLayer(it->second, diff_id));
  }
  discard();  // what another pull published first
  ADAPT_FAULT_POINT("image.import.after_publish");
  rec["size"] = total;
  RETURN_IF_ERROR(os::WriteFileAtomic(
      RefPath(key), rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0600));
  auto img = Lookup(key);
  if (!img) return Internal("imported image '" + key + "' vanished right after its import");
  return *img;
}

Result<StoredImage> ImageStore::Commit(const std::string& key, const CommitBase& base,
                                       const FillLayer& fill) {
  const json& config = base.config;
  std::shared_lock gc_lock(gc_mu_);
  json rec = {{"reference", key},
              {"platform", "linux/amd64"},
              {"config", config},
              {"layers", json::array()},
              {"blobs", json::array()}};
  if (!base.key.empty()) {
    // The base's layers and blobs are named again, so they stay while this image does.
    auto text = os::ReadFile(RefPath(base.key));
    json base_rec = text.ok() ? json::parse(*text, nullptr, false) : json();
    if (!base_rec.is_object() || !base_rec.contains("layers") || !Lookup(base.key))
      return Status(Code::kConflict, "the sandbox's image is no longer stored", "image");
    rec["layers"] = base_rec["layers"];
    rec["blobs"] = base_rec.value("blobs", json::array());
    if (base_rec.contains("local_base")) rec["local_base"] = base_rec["local_base"];
  } else if (!base.local_rootfs.empty()) {
    if (base.local_rootfs.find_first_of(":,") != std::string::npos)
      return Internal("local image path " + base.local_rootfs + " cannot be an overlay layer");
    rec["local_base"] = base.local_rootfs;
  } else {
    return Internal("a commit needs a base image");
  }
  std::string layer = std::string(kCommitPrefix) + Hex(Sha256Of(key));
  std::string tmp = TempPath("commit");
  Status st = fill(tmp);
  uint64_t bytes = st.ok() ? os::TreeBytesNoFollow(tmp) : 0;
  ADAPT_FAULT_POINT("image.commit.after_copy");
  if (st.ok()) st = os::Rename(tmp, LayerDir(layer));
  if (!st.ok()) {
    IgnoreError(os::RemoveTree(tmp), "tmp/ is swept at start-up");
    return st;
  }
  ADAPT_FAULT_POINT("image.commit.after_layer");
  rec["layers"].push_back(layer);
  rec["size"] = bytes;
  rec["digest"] =
      Sha256Of(rec["layers"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
               rec.value("local_base", "") +
               config.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  RETURN_IF_ERROR(os::WriteFileAtomic(
      RefPath(key), rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0600));
  auto img = Lookup(key);
  if (!img) return Internal("committed image '" + key + "' vanished right after its commit");
  return *img;
}

Result<std::vector<std::string>> ImageStore::CollectGarbage(const KeepFn& keep_fn) {
  std::unique_lock lock(gc_mu_);
  ASSIGN_OR_RETURN(std::set<std::string> keep, keep_fn());
  std::set<std::string> used_blobs, used_layers;
  std::vector<std::string> removed;
  for (const auto& name : os::ListDir(root_ + "/refs")) {
    std::string path = root_ + "/refs/" + name;
    json rec;
    auto text = os::ReadFile(path);
    if (text.ok()) rec = json::parse(*text, nullptr, false);
    if (!rec.is_object() || !rec.contains("reference") || !keep.count(rec["reference"])) {
      RETURN_IF_ERROR(os::RemoveTree(path));
      removed.push_back("reference " + (rec.is_object() ? rec.value("reference", name) : name));
      continue;
    }
    for (const auto& b : rec.value("blobs", json::array())) used_blobs.insert(Hex(b));
    for (const auto& l : rec.value("layers", json::array()))
      if (l.is_string()) used_layers.insert(LayerName(l.get<std::string>()));
  }
  for (const auto& hex : os::ListDir(root_ + "/layers")) {
    if (used_layers.count(hex)) continue;
    RETURN_IF_ERROR(os::RemoveTree(root_ + "/layers/" + hex));
    removed.push_back("layer sha256:" + hex);
  }
  for (const auto& hex : os::ListDir(root_ + "/blobs/sha256")) {
    if (used_blobs.count(hex)) continue;
    RETURN_IF_ERROR(os::RemoveTree(root_ + "/blobs/sha256/" + hex));
    removed.push_back("blob sha256:" + hex);
  }
  // A proof stays true (it is about content), but is kept only while its blob is.
  for (const auto& hex : os::ListDir(root_ + "/proofs"))
    if (!used_blobs.count(hex)) RETURN_IF_ERROR(os::RemoveTree(root_ + "/proofs/" + hex));
  // Access goes with its blob too: a blob fetched again is fetched for whoever pulls it.
  for (const auto& hex : os::ListDir(root_ + "/access"))
    if (!used_blobs.count(hex)) RETURN_IF_ERROR(os::RemoveTree(root_ + "/access/" + hex));
  return removed;
}

}  // namespace adapt::image
