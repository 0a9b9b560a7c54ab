#include "core/image_commit.h"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "core/image_catalog.h"
#include "core/image_service.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_lifecycle.h"

namespace adapt::core {
namespace {

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool TagChar(char c) {
  return LowerAlnum(c) || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-';
}

// The image config a committed image shows: its base's, so that a sandbox made from it starts
// as one made from the base would (entrypoint, command, environment, directory, user).
nlohmann::json ConfigOf(const Image& base, const image::ImageStore& store, const std::string& key) {
  if (!base.layers.empty())
    if (auto stored = store.Lookup(key)) return stored->config;
  nlohmann::json c = nlohmann::json::object();
  if (!base.config.entrypoint.empty()) c["Entrypoint"] = base.config.entrypoint;
  if (!base.config.cmd.empty()) c["Cmd"] = base.config.cmd;
  if (!base.config.env.empty()) c["Env"] = base.config.env;
  if (!base.config.working_dir.empty()) c["WorkingDir"] = base.config.working_dir;
  if (!base.config.user.empty()) c["User"] = base.config.user;
  return {{"config", c}};
}

}  // namespace

Status CheckCommittable(const store::SandboxRecord& r) {
  const std::string then = "; a running sandbox or a stopped durable one can be saved as an image";
  if (r.status == "running") return Status::Ok();
  if (r.status == "hibernated") {
    Hibernation h = ReadHibernation(r);
    if (!h.workspace_kept)
      return Conflict("sandbox " + r.id +
                      " was stopped without keeping its files (an instant sandbox)" + then);
    if (h.phase == HibernationPhase::kStopped) return Status::Ok();
    return Conflict("sandbox " + r.id + " is still stopping" + then);
  }
  return Conflict("sandbox " + r.id + " is " + r.status + then);
}

Result<std::string> CommitName(const CommitImage& request) {
  const std::string& name = request.name;
  bool ok =
      !name.empty() && name.size() <= 63 && LowerAlnum(name.front()) && LowerAlnum(name.back());
  for (char c : name) ok = ok && (LowerAlnum(c) || c == '-');
  if (!ok)
    return InvalidArgument("name",
                           "name must be 1 to 63 lower-case letters, digits or '-', starting "
                           "and ending with a letter or digit");
  std::string tag = request.tag.value_or("latest");
  ok = !tag.empty() && tag.size() <= 128 && tag.front() != '.' && tag.front() != '-';
  for (char c : tag) ok = ok && TagChar(c);
  if (!ok)
    return InvalidArgument("tag",
                           "tag must be 1 to 128 letters, digits, '_', '.' or '-', not "
                           "starting with '.' or '-'");
  return name + ":" + tag;
}

Status SandboxLifecycle::ExportWritableLayer(const std::string& org_id, const std::string& id,
                                             const std::string& dest) {
  // Held for the copy: no stop, start or delete changes the layer or its disk meanwhile.
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
  RETURN_IF_ERROR(CheckCommittable(r));
  return runtime_.ExportWritableLayer(id, dest);
}

Result<ImageView> ImageService::Commit(const Principal& who, const std::string& sandbox_id,
                                       const CommitImage& request,
                                       const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "image_commit", idempotency));
  // Before the sandbox's checks: the sandbox may have stopped or gone since the first request.
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) return MadeEarlier(who.org_id, *earlier, false);
  }
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, store_.GetSandbox(who.org_id, sandbox_id));
  ASSIGN_OR_RETURN(std::string name, CommitName(request));
  if (!lifecycle_ || !catalog_)
    return Unsupported("id", "saving a sandbox as an image is not supported on this host");
  RETURN_IF_ERROR(CheckCommittable(sandbox));
  auto base = catalog_->Resolve(who.org_id, sandbox.config.image);
  if (!base.ok())  // removed since the sandbox was made (a pulled image collected)
    return Status(
        Code::kConflict,
        "the image of sandbox " + sandbox_id + " is no longer here: " + base.status().message(),
        "id");
  image::ImageStore::CommitBase from;
  if (base->layers.empty())
    from.local_rootfs = base->rootfs;
  else
    from.key = ImageStoreKey(who.org_id, sandbox.config.image);
  from.config = ConfigOf(*base, images_, from.key);

  store::ImageRecord rec;
  rec.id = NewId("img");
  rec.org_id = who.org_id;
  rec.reference = kImportedImagePrefix + rec.id;
  rec.status = "committing";
  rec.imported = true;
  rec.import_format = kCommitFormat;
  rec.import_name = name;
  rec.created_at = NowMillis();
  {
    // The name check and the insert under one lock: two commits cannot both take a name.
    std::unique_lock lock(mu_);
    // A commit under the key that won a race since the check above: its image, before the
    // checks it now fails (its sandbox is being saved, its name is taken).
    std::optional<std::string> earlier;
    if (claim) {
      ASSIGN_OR_RETURN(earlier, store_.FindIdempotentCreate(*claim));
    }
    if (!earlier && committing_.count(sandbox_id))
      return Conflict("sandbox " + sandbox_id + " is being saved as an image already");
    ASSIGN_OR_RETURN(auto all, store_.ListImages(who.org_id));
    for (const auto& other : all)
      if (!earlier && other.import_format == kCommitFormat && other.import_name == name &&
          other.status != "failed")
        return Status(Code::kConflict,
                      "the organization has an image named " + name + " already (" + other.id +
                          "); choose another name or tag, or delete that image",
                      "name");
    if (!earlier) {
      ASSIGN_OR_RETURN(earlier, InsertImage(rec, claim));
    }
    if (earlier) {
      lock.unlock();  // View takes it
      return MadeEarlier(who.org_id, *earlier, false);
    }
    committing_.insert(sandbox_id);
    progress_[rec.id] = {0, 0};
  }
  ADAPT_FAULT_POINT("image.commit.after_row");
  boost::asio::post(workers_,
                    Guarded(
                        "image commit " + rec.id,
                        [this, rec, sandbox_id, from] { RunCommit(rec, sandbox_id, from); },
                        [this, rec, sandbox_id](const std::string& error) mutable {
                          rec.status = "failed";
                          rec.error = "saving sandbox " + sandbox_id + " failed: " + error;
                          FinishCommit(rec, sandbox_id);
                        }));
  return View(rec, false);
}

std::optional<Result<std::string>> ImageService::SavedReference(const std::string& org_id,
                                                                const std::string& name) {
  // Saved names never hold '/', so a registry reference ("docker.io/x") is not looked up.
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  std::string wanted = name.find(':') == std::string::npos ? name + ":latest" : name;
  auto all = store_.ListImages(org_id);
  if (!all.ok()) return Result<std::string>(all.status());
  for (const auto& rec : *all) {
    if (rec.import_format != kCommitFormat || rec.import_name != wanted || rec.status == "failed")
      continue;
    if (rec.status != "ready")
      return Result<std::string>(Status(
          Code::kConflict, "image " + wanted + " (" + rec.id + ") is " + rec.status + ", not ready",
          "image"));
    return Result<std::string>(rec.reference);
  }
  return std::nullopt;
}

void ImageService::RunCommit(store::ImageRecord rec, std::string sandbox_id,
                             image::ImageStore::CommitBase base) {
  auto committed = images_.Commit(rec.reference, base, [&](const std::string& dir) {
    return lifecycle_->ExportWritableLayer(rec.org_id, sandbox_id, dir);
  });
  if (committed.ok()) {
    rec.status = "ready";
    rec.digest = committed->digest;
    rec.size = static_cast<int64_t>(committed->size);
    rec.platform = committed->platform;
    rec.config_json = committed->config.value("config", nlohmann::json::object())
                          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    spdlog::warn("saving sandbox {} as image {} failed: {}", sandbox_id, rec.id,
                 committed.status().message());
    rec.status = "failed";
    rec.error = "saving sandbox " + sandbox_id + " failed: " + RecordMessage(committed.status());
  }
  FinishCommit(rec, sandbox_id);
}

void ImageService::FinishCommit(const store::ImageRecord& rec, const std::string& sandbox_id) {
  // Deleted meanwhile: do not bring the record back, and collect what the commit made.
  bool deleted = !store_.GetImage(rec.org_id, rec.id).ok();
  if (!deleted) WarnIfError(store_.PutImage(rec), "recording the commit of image " + rec.id);
  ADAPT_FAULT_POINT("image.commit.after_record");
  {
    std::lock_guard lock(mu_);
    progress_.erase(rec.id);
    committing_.erase(sandbox_id);
  }
  if (deleted || rec.status != "ready") ScheduleGarbageCollection();
}

}  // namespace adapt::core
