#include "core/image_service.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/text.h"
#include "base/time.h"
#include "core/image_catalog.h"
#include "core/image_commit.h"
#include "core/secret_service.h"
#include "image/digest.h"
#include "image/reference.h"

namespace adapt::core {
namespace {

// A hibernated sandbox boots from (or restores onto) its image's layers at start.
const std::vector<std::string> kLive = {"provisioning", "running", "hibernated"};
// A deleting sandbox may still have the image's layers mounted.
const std::vector<std::string> kMounted = {"provisioning", "running", "deleting", "hibernated"};

// The image config's `config` object (User, Env, Cmd, ...) as JSON text.
std::string ConfigText(const image::StoredImage& image) {
  return image.config.value("config", nlohmann::json::object())
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PhaseOf(const std::string& status) {
  if (status == "ready") return "Completed";
  if (status == "failed") return "Failed";
  return "Running";
}

}  // namespace

ImageService::ImageService(store::Store& store, image::ImageStore& images,
                           boost::asio::thread_pool& workers)
    : store_(store), images_(images), workers_(workers) {}

void ImageService::Reconcile() {
  auto all = store_.ListImages("");
  if (!all.ok()) return;
  for (auto rec : *all) {
    // An upload cannot be resumed; its staged files went with tmp/ at start-up.
    if (rec.status == "importing") {
      WarnIfError(store_.DeleteImage(rec.org_id, rec.id), "removing interrupted import " + rec.id);
      continue;
    }
    // Pulled before images were kept per organization (or collected since): what the
    // record names is not this organization's to use; it must be pulled again.
    if (rec.status == "ready" && !rec.imported &&
        !images_.Lookup(ImageStoreKey(rec.org_id, rec.reference))) {
      rec.status = "failed";
      rec.error = "the pulled image is no longer stored; pull it again";
      WarnIfError(store_.PutImage(rec), "marking image " + rec.id + " failed");
      continue;
    }
    // A commit cannot be resumed either: failed, and its layer (if published) collected.
    if (rec.status == "committing") {
      rec.status = "failed";
      rec.error = "the commit was interrupted by a restart of adaptd; save the sandbox again";
      WarnIfError(store_.PutImage(rec), "marking interrupted commit " + rec.id + " failed");
      continue;
    }
    if (rec.status != "pulling") continue;
    rec.status = "failed";
    rec.error = "the pull was interrupted by a restart of adaptd; pull again";
    WarnIfError(store_.PutImage(rec), "marking interrupted pull " + rec.id + " failed");
  }
  // Always, before the API answers: an import or commit cut short may have published blobs,
  // layers or its reference, and a delete's collection (posted, not waited for) may not have
  // run. Nothing refers to those now. Cheap when there is nothing to collect: the references
  // are read and three folders listed.
  CollectGarbage();
}

// The password is given (used for this pull only) or the named organization secret's current
// value. Neither is ever stored or shown.
Result<image::Credentials> ImageService::ResolveCredentials(const std::string& org_id,
                                                            const RegistryCredentials& c) {
  if (c.password.has_value() == c.password_secret.has_value())
    return InvalidArgument("credentials",
                           "credentials take one of a password and a password secret");
  image::Credentials creds;
  creds.username = c.username;
  if (c.password) {
    creds.password = *c.password;
  } else {
    if (!secrets_)
      return Unsupported("credentials.password_secret", "secrets are not supported on this host");
    ASSIGN_OR_RETURN(creds.password,
                     secrets_->Reveal(org_id, *c.password_secret, "credentials.password_secret"));
  }
  if (creds.username.size() > 1024 || creds.password.size() > 8192)
    return InvalidArgument("credentials", "credentials are too long");
  return creds;
}

Result<ImageView> ImageService::Pull(const Principal& who, const PullImage& request,
                                     const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "image", idempotency));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) return MadeEarlier(who.org_id, *earlier, false);
  }
  RETURN_IF_ERROR(image::ParseReference(request.reference, "reference").status());
  if (policy_) RETURN_IF_ERROR(policy_->CheckPull(request.reference));
  image::Credentials creds;
  if (request.credentials) {
    ASSIGN_OR_RETURN(creds, ResolveCredentials(who.org_id, *request.credentials));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeRunningPlace(who.org_id));
  store::ImageRecord rec;
  rec.id = NewId("img");
  rec.org_id = who.org_id;
  rec.reference = request.reference;
  rec.status = "pulling";
  rec.created_at = NowMillis();
  ASSIGN_OR_RETURN(std::optional<std::string> earlier, InsertImage(rec, claim));
  if (earlier) return MadeEarlier(who.org_id, *earlier, false);
  ADAPT_FAULT_POINT("image.pull.after_row");
  {
    std::lock_guard lock(mu_);
    progress_[rec.id] = {0, 0};
  }
  // The place goes with the pull, however it ends.
  boost::asio::post(workers_, Guarded(
                                  "image pull " + rec.id,
                                  [this, rec, creds, place] {
                                    RunPull(rec, creds);
                                    (void)place;
                                  },
                                  [this, rec, place](const std::string& error) mutable {
                                    rec.status = "failed";
                                    rec.error = "pulling the image failed: " + error;
                                    FinishPull(rec);
                                  }));
  return View(rec, false);
}

Result<ImageView> ImageService::Import(const Principal& who, const std::string& name,
                                       const image::ByteSource& body,
                                       const std::optional<store::IdempotencyKey>& idempotency) {
  if (name.size() > 255 || HasControlCharacter(name))
    return InvalidArgument("name", "name must be at most 255 printable characters");
  if (policy_) RETURN_IF_ERROR(policy_->CheckImport());
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "image_import", idempotency));
  // With a key, the archive is hashed as it is read: its digest completes the fingerprint.
  image::Sha256 archive_hash;
  image::ByteSource source = body;
  if (claim) {
    // Recorded with any fingerprint (a real one is never empty): a replay or a Conflict, known
    // only once the whole archive is read, so nothing is imported meanwhile.
    store::IdempotencyClaim probe = *claim;
    probe.key.body_hash.clear();
    auto probed = store_.FindIdempotentCreate(probe);
    if (!probed.ok() && probed.status().code() == Code::kConflict)
      return ImportedEarlier(*claim, body);
    RETURN_IF_ERROR(probed.status());
    source = [&](char* buf, size_t n) -> long {
      long got = body(buf, n);
      if (got > 0) archive_hash.Update(buf, static_cast<size_t>(got));
      return got;
    };
  }
  ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeRunningPlace(who.org_id));
  store::ImageRecord rec;
  rec.id = NewId("img");
  rec.org_id = who.org_id;
  rec.reference = kImportedImagePrefix + rec.id;
  rec.status = "importing";
  rec.imported = true;
  rec.created_at = NowMillis();
  // Written first: garbage collection keeps what the import publishes, and a restart
  // removes the record of an import it interrupted.
  RETURN_IF_ERROR(store_.InsertImageWithinCaps(rec, max_images_, max_in_progress_));
  auto imported = images_.ImportArchive(rec.reference, name, source);
  // The fingerprint covers the whole body, also what follows the archive's end.
  if (imported.ok() && claim) {
    char rest[16384];
    long got = 0;
    while ((got = source(rest, sizeof rest)) > 0) {
    }
    if (got < 0)
      imported = InvalidArgument("archive", "the upload ended before the end of the archive");
  }
  if (!imported.ok()) {
    // The import error is the answer; a record left "importing" goes at the next start-up.
    WarnIfError(store_.DeleteImage(rec.org_id, rec.id), "removing failed import " + rec.id);
    if (imported.status().code() == Code::kInternal)  // maybe published in part
      ScheduleGarbageCollection();
    return imported.status();
  }
  rec.status = "ready";
  rec.import_format = imported->format;
  rec.import_name = imported->name;
  rec.digest = imported->image.digest;
  rec.size = imported->image.size;
  rec.platform = imported->image.platform;
  rec.config_json = ConfigText(imported->image);
  // Deleted during the upload: do not bring the record back.
  if (!store_.GetImage(rec.org_id, rec.id).ok()) {
    ScheduleGarbageCollection();
    return Status(Code::kConflict, "image " + rec.id + " was deleted during its import", "id");
  }
  if (claim) claim->key.body_hash = Sha256Hex(claim->key.body_hash + "\n" + archive_hash.Digest());
  return RecordImport(rec, claim);
}

void ImageService::RunPull(store::ImageRecord rec, image::Credentials creds) {
  std::string id = rec.id;
  auto pulled = images_.Pull(ImageStoreKey(rec.org_id, rec.reference), rec.reference, creds,
                             [this, id](uint64_t done, uint64_t total) {
                               std::lock_guard lock(mu_);
                               progress_[id] = {done, total};
                             });
  ADAPT_FAULT_POINT("image.pull.after_fetch");
  if (pulled.ok()) {
    rec.status = "ready";
    rec.digest = pulled->digest;
    rec.size = pulled->size;
    rec.platform = pulled->platform;
    rec.config_json = ConfigText(*pulled);
  } else {
    spdlog::warn("pulling image {} ({}) failed: {}", rec.reference, id, pulled.status().message());
    rec.status = "failed";
    rec.error = RecordMessage(pulled.status());
  }
  FinishPull(rec);
}

void ImageService::FinishPull(const store::ImageRecord& rec) {
  const std::string& id = rec.id;
  // Deleted meanwhile: do not bring the record back, and collect what the pull brought.
  bool deleted = !store_.GetImage(rec.org_id, id).ok();
  if (!deleted) WarnIfError(store_.PutImage(rec), "recording the pull of image " + id);
  ADAPT_FAULT_POINT("image.pull.after_record");
  {
    std::lock_guard lock(mu_);
    progress_.erase(id);
  }
  if (deleted) ScheduleGarbageCollection();
}

ImageView ImageService::View(const store::ImageRecord& rec, bool detail) {
  auto present = [](const std::string& s) {
    return s.empty() ? std::nullopt : std::optional<std::string>(s);
  };
  ImageView v;
  v.id = rec.id;
  v.source = rec.import_format == kCommitFormat ? "commit" : rec.imported ? "import" : "pull";
  // An imported image's reference is the name its archive gave it, if any.
  v.reference = rec.imported ? present(rec.import_name) : std::optional(rec.reference);
  v.status = rec.status;
  v.created_at = rec.created_at;
  v.digest = present(rec.digest);
  v.size = rec.size;
  v.platform = present(rec.platform);
  v.error = present(rec.error);
  if (rec.status == "ready") {
    uint64_t size = static_cast<uint64_t>(rec.size.value_or(0));
    v.progress = {size, size};
  }
  {
    std::lock_guard lock(mu_);
    if (auto it = progress_.find(rec.id); it != progress_.end())
      v.progress = {it->second.first, it->second.second};
  }
  v.operation = {rec.id, PhaseOf(rec.status)};
  if (detail) {
    v.detailed = true;
    v.config_json = rec.config_json;
    auto live = store_.ListSandboxesWithStatus(kLive);
    if (live.ok()) {
      for (const auto& s : *live) {
        if (s.org_id != rec.org_id) continue;
        if (s.config.image_id == rec.id || s.config.image == rec.reference)
          v.sandboxes.push_back(s.id);
      }
    }
  }
  return v;
}

Result<ImageView> ImageService::Get(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::ImageRecord rec, store_.GetImage(who.org_id, id));
  return View(rec, true);
}

Result<Page<ImageView>> ImageService::List(const Principal& who, const PageRequest& page) {
  ASSIGN_OR_RETURN(auto all, store_.ListImages(who.org_id));
  ASSIGN_OR_RETURN(
      Page<store::ImageRecord> records,
      PageNewestFirst(std::move(all), page, [](const store::ImageRecord& r) { return r.seq; }));
  Page<ImageView> out;
  for (const auto& rec : records.items) out.items.push_back(View(rec, false));
  out.next_cursor = records.next_cursor;
  return out;
}

Result<ImageOperation> ImageService::Operation(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::ImageRecord rec, store_.GetImage(who.org_id, id));
  ImageView v = View(rec, false);
  return ImageOperation{.id = rec.id,
                        .kind = rec.import_format == kCommitFormat ? "image.commit"
                                : rec.imported                     ? "image.import"
                                                                   : "image.pull",
                        .phase = PhaseOf(rec.status),
                        .progress = v.progress,
                        .image_id = rec.id,
                        .error = v.error};
}

Status ImageService::Delete(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::ImageRecord rec, store_.GetImage(who.org_id, id));
  ImageView v = View(rec, true);
  if (!v.sandboxes.empty())
    return Conflict("image " + id + " is in use by sandbox " + v.sandboxes[0] +
                    "; delete the sandboxes using it first");
  // A pull in progress finishes in the background and is then collected.
  RETURN_IF_ERROR(store_.DeleteImage(who.org_id, id));
  ScheduleGarbageCollection();
  return Status::Ok();
}

Result<std::string> ImageService::ReferenceOf(const std::string& org_id, const std::string& id) {
  auto rec = store_.GetImage(org_id, id);
  if (!rec.ok()) return Status(Code::kNotFound, "image " + id + " not found", "imageId");
  if (rec->status != "ready")
    return Status(Code::kConflict, "image " + id + " is " + rec->status + ", not ready", "imageId");
  return rec->reference;
}

void ImageService::ScheduleGarbageCollection() {
  if (gc_queued_.exchange(true)) return;
  boost::asio::post(workers_, Guarded("image garbage collection", [this] {
                      // Cleared first: what is deleted while this one runs gets a run of its own.
                      gc_queued_ = false;
                      CollectGarbage();
                    }));
}

void ImageService::RunHoldingPullPlace(std::shared_ptr<void> place, std::string work_name,
                                       std::function<void()> work) {
  boost::asio::post(
      workers_, Guarded(std::move(work_name), [place = std::move(place), work = std::move(work)] {
        work();
        (void)place;
      }));
}

Result<std::shared_ptr<void>> ImageService::TakeRunningPlace(const std::string& org_id) {
  std::shared_ptr<void> place = running_.TryTake(org_id);
  if (!place)
    return Status(Code::kResourceExhausted,
                  std::to_string(running_.per_org()) +
                      " image pulls or imports of the organization are already in progress "
                      "(deleted images' pulls count until they end), the most it may have; "
                      "retry when one has ended");
  return place;
}

void ImageService::CollectGarbage() {
  // Asked under the store's exclusive lock: every image record and sandbox is written before
  // its pull starts, so what a pull brings in is kept.
  auto removed = images_.CollectGarbage([this]() -> Result<std::set<std::string>> {
    std::set<std::string> keep;
    ASSIGN_OR_RETURN(auto all, store_.ListImages(""));
    ASSIGN_OR_RETURN(auto live, store_.ListSandboxesWithStatus(kMounted));
    for (const auto& rec : all) {
      // A failed commit keeps its record (to say why) but nothing on disk.
      if (rec.import_format == kCommitFormat && rec.status == "failed") continue;
      keep.insert(ImageStoreKey(rec.org_id, rec.reference));
    }
    for (const auto& s : live)
      if (!s.config.image.empty()) keep.insert(ImageStoreKey(s.org_id, s.config.image));
    return keep;
  });
  if (!removed.ok()) {  // unsure what is used: nothing was removed
    spdlog::warn("image garbage collection: {}", removed.status().message());
    return;
  }
  for (const auto& r : *removed) spdlog::info("image garbage collection removed {}", r);
}

}  // namespace adapt::core
