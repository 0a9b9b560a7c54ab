// ImageService: the typed verbs on /v1/images. An organization pulls an image by reference
// (an operation: the image is "pulling" with progress in bytes until "ready" or "failed"),
// imports private images from an archive upload, lists and inspects its images (digest,
// size, platform, config, the sandboxes using it) and deletes them (Conflict while a live
// sandbox uses one); deleting collects the blobs and layers nothing uses any more. Registry
// credentials (a password, or the name of an organization secret holding it) serve the pull
// and are never stored or echoed. A sandbox's filesystem is saved as an image by Commit
// (image_commit.h). Thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "base/list_cursor.h"
#include "base/org_counter.h"
#include "core/auth.h"
#include "core/image_policy.h"
#include "core/image_types.h"
#include "image/image_store.h"
#include "store/store.h"

namespace adapt::core {

class SecretService;
class SandboxLifecycle;
class ImageCatalog;

// The image-store key of an imported image: "import:<image id>". Only imageId reaches it;
// sandbox create refuses it as `image`, so another organization cannot name it.
inline constexpr const char* kImportedImagePrefix = "import:";

class ImageService {
 public:
  ImageService(store::Store& store, image::ImageStore& images, boost::asio::thread_pool& workers);

  // Pulls, imports and commits a previous adaptd left unfinished are marked failed (an import
  // is forgotten), then what no image or sandbox uses any more is collected from disk. Call
  // once, before serving.
  void Reconcile();

  // Pull, Import and Commit take an optional Idempotency-Key (scopes "image",
  // "image_import", "image_commit"): it is written with the image's record, so a replay
  // starts nothing and answers the image the key made, as it is now (also while its pull or
  // commit still runs); Conflict for the key with another request or when that image has
  // been deleted since; InvalidArgument unless the key is 1 to 255 bytes.

  // Starts pulling `request.reference` (the image is "pulling" until "ready" or "failed").
  Result<ImageView> Pull(const Principal& who, const PullImage& request,
                         const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  // Imports an OCI image layout or `docker save` archive streamed from `body` (see
  // image/image_archive.h); `name` picks one image of several and is shown as its reference.
  // Synchronous: the image is ready when this returns; a bad archive leaves nothing behind.
  // An Idempotency-Key's fingerprint is `idempotency->body_hash` (the request's path and
  // name) with the archive's sha256: a replay reads the archive only to compare it. Two
  // imports racing with one key both read their archive; the second's image is dropped.
  Result<ImageView> Import(const Principal& who, const std::string& name,
                           const image::ByteSource& body,
                           const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  Result<ImageView> Get(const Principal& who, const std::string& id);
  // A newest-first page of the organization's images (base/list_cursor.h); InvalidArgument
  // for a bad limit or cursor.
  Result<Page<ImageView>> List(const Principal& who, const PageRequest& page);
  Status Delete(const Principal& who, const std::string& id);
  // Saves sandbox `sandbox_id`'s writable layer as a new image on top of the sandbox's image
  // (an operation like a pull: the image is "committing" until "ready" or "failed"); see
  // image_commit.h for which sandboxes can be saved. NotFound for another organization's
  // sandbox; InvalidArgument for a bad name or tag; Conflict when the organization has an
  // image of that name and tag, or the sandbox cannot be saved now.
  Result<ImageView> Commit(const Principal& who, const std::string& sandbox_id,
                           const CommitImage& request,
                           const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  // A pull, import or commit as an operation: its phase (Running, Completed, Failed).
  Result<ImageOperation> Operation(const Principal& who, const std::string& id);

  // The reference of the image the organization saved from a sandbox as `name` ("name:tag", or
  // "name" for "name:latest"), when it has one: Conflict unless it is ready. nullopt when no
  // saved image has that name (the name is then an ordinary reference).
  std::optional<Result<std::string>> SavedReference(const std::string& org_id,
                                                    const std::string& name);
  // The reference of this organization's ready image `id` (sandbox create's imageId).
  Result<std::string> ReferenceOf(const std::string& org_id, const std::string& id);

  // Removes what no image record and no live sandbox uses. It waits for every pull in
  // progress to end first (they hold the store's lock), so it runs on the background pool,
  // at most one queued at a time (ScheduleGarbageCollection), never on a request's thread.
  void CollectGarbage();

  // Which pulls and imports the REST API accepts (image_policy.h); without one, all.
  void set_image_policy(const ImagePolicy* policy) { policy_ = policy; }
  // Where credentials.password_secret is looked up; without one it is refused.
  void set_secret_service(SecretService* secrets) { secrets_ = secrets; }
  // Where Commit finds sandboxes' writable layers and their images; without them commits
  // are refused. Set before serving.
  void set_commit_source(SandboxLifecycle* lifecycle, const ImageCatalog* catalog) {
    lifecycle_ = lifecycle;
    catalog_ = catalog;
  }
  // Per-organization caps (0: none): images, and pulls or imports in progress. A pull or an
  // import past one is kResourceExhausted. A pull whose image was deleted meanwhile still
  // counts until it ends (it cannot be stopped halfway), so deleting images does not let an
  // organization run more. Set before serving.
  void set_caps(int max_images, int max_in_progress) {
    max_images_ = max_images;
    max_in_progress_ = max_in_progress;
    running_ = OrgCounter(static_cast<size_t>(std::max(max_in_progress, 0)));
  }
  // Pulls and imports of `org_id` running now, deleted ones included.
  size_t Running(const std::string& org_id) const { return running_.Held(org_id); }
  // For a sandbox whose image is not here yet: a place among `org_id`'s pulls in progress
  // (kResourceExhausted past the cap), taken before the sandbox is recorded, and `work` (its
  // provisioning, which pulls the image) run on the image pool holding that place until it
  // ends, so that a registry that stalls holds none of the threads that answer the API.
  Result<std::shared_ptr<void>> TakePullPlace(const std::string& org_id) {
    return TakeRunningPlace(org_id);
  }
  void RunHoldingPullPlace(std::shared_ptr<void> place, std::string work_name,
                           std::function<void()> work);

 private:
  Result<image::Credentials> ResolveCredentials(const std::string& org_id,
                                                const RegistryCredentials& c);
  void RunPull(store::ImageRecord rec, image::Credentials creds);
  // Queues one collection on the background pool unless one is queued already: each delete
  // asks for one, and a collection waits for the pulls in progress.
  void ScheduleGarbageCollection();
  // A place among `org_id`'s pulls and imports in progress; kResourceExhausted past the cap.
  Result<std::shared_ptr<void>> TakeRunningPlace(const std::string& org_id);
  // Records how pull `rec` ended ("ready" or "failed"), unless the image was deleted
  // meanwhile, and forgets its progress; also what settles a pull that threw.
  void FinishPull(const store::ImageRecord& rec);
  // As FinishPull, for commit `rec` of sandbox `sandbox_id`.
  void FinishCommit(const store::ImageRecord& rec, const std::string& sandbox_id);
  void RunCommit(store::ImageRecord rec, std::string sandbox_id,
                 image::ImageStore::CommitBase base);
  ImageView View(const store::ImageRecord& rec, bool detail);
  // image_idempotency.cc. The image an earlier create under an Idempotency-Key made; Conflict when
  // deleted since.
  Result<ImageView> MadeEarlier(const std::string& org_id, const std::string& id, bool detail);
  // Inserts `rec` within the caps, with `claim` when there is one. The id of the image an
  // earlier request under the key made (then nothing is inserted), else nullopt.
  Result<std::optional<std::string>> InsertImage(
      const store::ImageRecord& rec, const std::optional<store::IdempotencyClaim>& claim);
  // An import whose key is recorded: reads `body` to its end only to fingerprint it, and
  // answers the image the key made (Conflict for another archive).
  Result<ImageView> ImportedEarlier(store::IdempotencyClaim claim, const image::ByteSource& body);
  // Records a finished import's `rec` ready, with `claim` (its fingerprint complete) when
  // there is one; a concurrent import under the key that won answers its image instead, and
  // this one's is removed.
  Result<ImageView> RecordImport(const store::ImageRecord& rec,
                                 const std::optional<store::IdempotencyClaim>& claim);

  store::Store& store_;
  image::ImageStore& images_;
  const ImagePolicy* policy_ = nullptr;
  // Pulls, commits and collections: adaptd gives them a pool of their own, so that slow
  // registries never hold the threads that answer the API.
  boost::asio::thread_pool& workers_;
  std::atomic<bool> gc_queued_{false};
  OrgCounter running_;
  std::mutex mu_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> progress_;  // id -> (bytes, total)
  SecretService* secrets_ = nullptr;
  SandboxLifecycle* lifecycle_ = nullptr;
  const ImageCatalog* catalog_ = nullptr;
  std::set<std::string> committing_;  // sandboxes being saved now; guarded by mu_
  int max_images_ = 0, max_in_progress_ = 0;
};

}  // namespace adapt::core
