// ImageService's creates under an Idempotency-Key: each image record is written in the
// transaction that records its key (store::IdempotencyStore::CreateOnce), so a crash keeps
// both or neither, and a replay finds the image without pulling, importing or saving again.
#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/image_service.h"
#include "image/digest.h"

namespace adapt::core {

Result<ImageView> ImageService::MadeEarlier(const std::string& org_id, const std::string& id,
                                            bool detail) {
  auto rec = store_.GetImage(org_id, id);
  if (!rec.ok() && rec.status().code() == Code::kNotFound)
    return store::IdempotentObjectGone("image " + id);
  if (!rec.ok()) return rec.status();
  return View(*rec, detail);
}

Result<std::optional<std::string>> ImageService::InsertImage(
    const store::ImageRecord& rec, const std::optional<store::IdempotencyClaim>& claim) {
  if (!claim) {
    RETURN_IF_ERROR(store_.InsertImageWithinCaps(rec, max_images_, max_in_progress_));
    return std::optional<std::string>();
  }
  ASSIGN_OR_RETURN(
      store::IdempotentCreate made, store_.CreateOnce(*claim, [&]() -> Result<std::string> {
        RETURN_IF_ERROR(store_.InsertImageWithinCaps(rec, max_images_, max_in_progress_));
        return rec.id;
      }));
  if (made.replayed) return std::optional<std::string>(made.object_id);
  return std::optional<std::string>();
}

Result<ImageView> ImageService::ImportedEarlier(store::IdempotencyClaim claim,
                                                const image::ByteSource& body) {
  image::Sha256 archive_hash;
  char buf[16384];
  long got = 0;
  while ((got = body(buf, sizeof buf)) > 0) archive_hash.Update(buf, static_cast<size_t>(got));
  if (got < 0) return InvalidArgument("archive", "the upload ended before the end of the archive");
  claim.key.body_hash = Sha256Hex(claim.key.body_hash + "\n" + archive_hash.Digest());
  ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(claim));
  // Recorded when the import began, swept since (24 h): the archive is read, so it is gone.
  if (!earlier)
    return Status(Code::kUnavailable,
                  "the Idempotency-Key expired while the archive was read; send it again",
                  "Idempotency-Key");
  return MadeEarlier(claim.org_id, *earlier, true);
}

Result<ImageView> ImageService::RecordImport(const store::ImageRecord& rec,
                                             const std::optional<store::IdempotencyClaim>& claim) {
  if (!claim) {
    RETURN_IF_ERROR(store_.PutImage(rec));
    return View(rec, true);
  }
  auto made = store_.CreateOnce(*claim, [&]() -> Result<std::string> {
    RETURN_IF_ERROR(store_.PutImage(rec));
    return rec.id;
  });
  if (made.ok() && !made->replayed) return View(rec, true);
  // Another body under the key, or an import under it finished first: this one is dropped.
  WarnIfError(store_.DeleteImage(rec.org_id, rec.id), "removing superseded import " + rec.id);
  ScheduleGarbageCollection();
  if (!made.ok()) return made.status();
  return MadeEarlier(rec.org_id, made->object_id, true);
}

}  // namespace adapt::core
