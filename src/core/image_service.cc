#include "core/image_service.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <set>

#include "base/fault_point.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "core/image_catalog.h"
#include "core/secret_service.h"
#include "image/reference.h"

namespace adapt::core {
namespace {

using nlohmann::json;

// A hibernated sandbox boots from (or restores onto) its image's layers at start.
const std::vector<std::string> kLive = {"provisioning", "running", "hibernated"};
// A deleting sandbox may still have the image's layers mounted.
const std::vector<std::string> kMounted = {"provisioning", "running", "deleting", "hibernated"};

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
  bool interrupted_import = false;
  for (auto rec : *all) {
    // An upload cannot be resumed; its staged files went with tmp/ at start-up.
    if (rec.status == "importing") {
      WarnIfError(store_.DeleteImage(rec.org_id, rec.id), "removing interrupted import " + rec.id);
      interrupted_import = true;
      continue;
    }
    // Pulled before images were kept per organization (or collected since): what the
    // record names is not this organization's to use; it must be pulled again.
    if (rec.status == "ready" && rec.data.value("source", "") != "import" &&
        !images_.Lookup(ImageStoreKey(rec.org_id, rec.reference))) {
      rec.status = "failed";
      rec.data["error"] = "the pulled image is no longer stored; pull it again";
      WarnIfError(store_.PutImage(rec), "marking image " + rec.id + " failed");
      continue;
    }
    if (rec.status != "pulling") continue;
    rec.status = "failed";
    rec.data["error"] = "the pull was interrupted by a restart of adaptd; pull again";
    WarnIfError(store_.PutImage(rec), "marking interrupted pull " + rec.id + " failed");
  }
  // An import cut short after publishing some blobs, layers or its reference: nothing refers
  // to them now, so they go before the API answers.
  if (interrupted_import) CollectGarbage();
}

// {"username", "password"} (used for this pull only) or {"username", "passwordSecret"}: the
// password is the named organization secret's current value. Neither is ever stored or shown.
Result<image::Credentials> ImageService::ParseCredentials(const std::string& org_id,
                                                          const json& c) {
  constexpr const char* kShape =
      "credentials must be {\"username\": string, \"password\": string} or "
      "{\"username\": string, \"passwordSecret\": secret name}";
  if (!c.is_object()) return InvalidArgument("credentials", kShape);
  for (const auto& [key, _] : c.items()) {
    if (key != "username" && key != "password" && key != "passwordSecret")
      return InvalidArgument("credentials." + key, "unknown field 'credentials." + key + "'");
  }
  if (!c.contains("username") || !c["username"].is_string())
    return InvalidArgument("credentials.username", kShape);
  bool has_password = c.contains("password"), has_secret = c.contains("passwordSecret");
  if (has_password == has_secret)
    return InvalidArgument("credentials", "credentials take one of password and passwordSecret");
  image::Credentials creds;
  creds.username = c["username"];
  if (has_password) {
    if (!c["password"].is_string()) return InvalidArgument("credentials.password", kShape);
    creds.password = c["password"];
  } else {
    if (!c["passwordSecret"].is_string())
      return InvalidArgument("credentials.passwordSecret", kShape);
    if (!secrets_)
      return Unsupported("credentials.passwordSecret", "secrets are not supported on this host");
    ASSIGN_OR_RETURN(creds.password,
                     secrets_->Reveal(org_id, c["passwordSecret"].get<std::string>(),
                                      "credentials.passwordSecret"));
  }
  if (creds.username.size() > 1024 || creds.password.size() > 8192)
    return InvalidArgument("credentials", "credentials are too long");
  return creds;
}

Result<json> ImageService::Pull(const Principal& who, const json& body) {
  if (!body.is_object()) return InvalidArgument("body", "the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "reference" && key != "credentials")
      return InvalidArgument(key, "unknown field '" + key + "'");
  }
  if (!body.contains("reference") || !body["reference"].is_string())
    return InvalidArgument(
        "reference", "reference must be an image reference such as \"registry.example.com/app:1\"");
  std::string reference = body["reference"];
  RETURN_IF_ERROR(image::ParseReference(reference, "reference").status());
  image::Credentials creds;
  if (body.contains("credentials") && !body["credentials"].is_null()) {
    ASSIGN_OR_RETURN(creds, ParseCredentials(who.org_id, body["credentials"]));
  }
  store::ImageRecord rec;
  rec.id = NewId("img");
  rec.org_id = who.org_id;
  rec.reference = reference;
  rec.status = "pulling";
  rec.created_at = NowMillis();
  RETURN_IF_ERROR(store_.InsertImageWithinCaps(rec, max_images_, max_in_progress_));
  ADAPT_FAULT_POINT("image.pull.after_row");
  {
    std::lock_guard lock(mu_);
    progress_[rec.id] = {0, 0};
  }
  boost::asio::post(workers_, [this, rec, creds] { RunPull(rec, creds); });
  return View(rec, false);
}

Result<json> ImageService::Import(const Principal& who, const std::string& name,
                                  const image::ByteSource& body) {
  if (name.size() > 255 ||
      std::any_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return InvalidArgument("name", "name must be at most 255 printable characters");
  store::ImageRecord rec;
  rec.id = NewId("img");
  rec.org_id = who.org_id;
  rec.reference = kImportedImagePrefix + rec.id;
  rec.status = "importing";
  rec.data = {{"source", "import"}};
  rec.created_at = NowMillis();
  // Written first: garbage collection keeps what the import publishes, and a restart
  // removes the record of an import it interrupted.
  RETURN_IF_ERROR(store_.InsertImageWithinCaps(rec, max_images_, max_in_progress_));
  auto imported = images_.ImportArchive(rec.reference, name, body);
  if (!imported.ok()) {
    // The import error is the answer; a record left "importing" goes at the next start-up.
    WarnIfError(store_.DeleteImage(rec.org_id, rec.id), "removing failed import " + rec.id);
    if (imported.status().code() == Code::kInternal)  // maybe published in part
      boost::asio::post(workers_, [this] { CollectGarbage(); });
    return imported.status();
  }
  rec.status = "ready";
  rec.data = {{"source", "import"},
              {"format", imported->format},
              {"name", imported->name.empty() ? json(nullptr) : json(imported->name)},
              {"digest", imported->image.digest},
              {"size", imported->image.size},
              {"platform", imported->image.platform},
              {"config", imported->image.config.value("config", json::object())}};
  // Deleted during the upload: do not bring the record back.
  if (!store_.GetImage(rec.org_id, rec.id).ok()) {
    boost::asio::post(workers_, [this] { CollectGarbage(); });
    return Status(Code::kConflict, "image " + rec.id + " was deleted during its import", "id");
  }
  RETURN_IF_ERROR(store_.PutImage(rec));
  return View(rec, true);
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
    rec.data = {{"digest", pulled->digest},
                {"size", pulled->size},
                {"platform", pulled->platform},
                {"config", pulled->config.value("config", json::object())}};
  } else {
    spdlog::warn("pulling image {} ({}) failed: {}", rec.reference, id, pulled.status().message());
    rec.status = "failed";
    rec.data = {{"error", pulled.status().message()}};
  }
  // Deleted meanwhile: do not bring the record back, and collect what the pull brought.
  bool deleted = !store_.GetImage(rec.org_id, id).ok();
  if (!deleted) WarnIfError(store_.PutImage(rec), "recording the pull of image " + id);
  ADAPT_FAULT_POINT("image.pull.after_record");
  {
    std::lock_guard lock(mu_);
    progress_.erase(id);
  }
  if (deleted) CollectGarbage();
}

json ImageService::View(const store::ImageRecord& rec, bool detail) {
  bool imported = rec.data.value("source", "") == "import";
  json v = {{"id", rec.id},
            {"source", imported ? "import" : "pull"},
            // An imported image's reference is the name its archive gave it, if any.
            {"reference", imported ? rec.data.value("name", json(nullptr)) : json(rec.reference)},
            {"status", rec.status},
            {"createdAt", FormatRfc3339(rec.created_at)}};
  for (const char* k : {"digest", "size", "platform", "error"})
    v[k] = rec.data.contains(k) ? rec.data[k] : json(nullptr);
  json progress = {{"bytes", rec.status == "ready" ? rec.data.value("size", 0) : 0},
                   {"totalBytes", rec.status == "ready" ? rec.data.value("size", 0) : 0}};
  {
    std::lock_guard lock(mu_);
    if (auto it = progress_.find(rec.id); it != progress_.end())
      progress = {{"bytes", it->second.first}, {"totalBytes", it->second.second}};
  }
  v["progress"] = progress;
  v["operation"] = {{"id", rec.id}, {"phase", PhaseOf(rec.status)}};
  if (detail) {
    v["config"] = rec.data.contains("config") ? rec.data["config"] : json(nullptr);
    json users = json::array();
    auto live = store_.ListSandboxesWithStatus(kLive);
    if (live.ok()) {
      for (const auto& s : *live) {
        if (s.org_id != rec.org_id) continue;
        if (s.config.value("imageId", json(nullptr)) == rec.id ||
            (s.config.contains("image") && s.config["image"] == rec.reference))
          users.push_back(s.id);
      }
    }
    v["sandboxes"] = users;
  }
  return v;
}

Result<json> ImageService::Get(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::ImageRecord rec, store_.GetImage(who.org_id, id));
  return View(rec, true);
}

Result<json> ImageService::List(const Principal& who) {
  ASSIGN_OR_RETURN(auto all, store_.ListImages(who.org_id));
  json items = json::array();
  for (const auto& rec : all) items.push_back(View(rec, false));
  return json{{"images", items}};
}

Result<json> ImageService::Operation(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::ImageRecord rec, store_.GetImage(who.org_id, id));
  json v = View(rec, false);
  return json{{"id", rec.id},
              {"kind", rec.data.value("source", "") == "import" ? "image.import" : "image.pull"},
              {"phase", PhaseOf(rec.status)},
              {"progress", v["progress"]},
              {"imageId", rec.id},
              {"error", v["error"]}};
}

Status ImageService::Delete(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::ImageRecord rec, store_.GetImage(who.org_id, id));
  json v = View(rec, true);
  if (!v["sandboxes"].empty())
    return Conflict("image " + id + " is in use by sandbox " +
                    v["sandboxes"][0].get<std::string>() + "; delete the sandboxes using it first");
  // A pull in progress finishes in the background and is then collected.
  RETURN_IF_ERROR(store_.DeleteImage(who.org_id, id));
  boost::asio::post(workers_, [this] { CollectGarbage(); });
  return Status::Ok();
}

Result<std::string> ImageService::ReferenceOf(const std::string& org_id, const std::string& id) {
  auto rec = store_.GetImage(org_id, id);
  if (!rec.ok()) return Status(Code::kNotFound, "image " + id + " not found", "imageId");
  if (rec->status != "ready")
    return Status(Code::kConflict, "image " + id + " is " + rec->status + ", not ready", "imageId");
  return rec->reference;
}

void ImageService::CollectGarbage() {
  // Asked under the store's exclusive lock: every image record and sandbox is written before
  // its pull starts, so what a pull brings in is kept.
  auto removed = images_.CollectGarbage([this]() -> Result<std::set<std::string>> {
    std::set<std::string> keep;
    ASSIGN_OR_RETURN(auto all, store_.ListImages(""));
    ASSIGN_OR_RETURN(auto live, store_.ListSandboxesWithStatus(kMounted));
    for (const auto& rec : all) keep.insert(ImageStoreKey(rec.org_id, rec.reference));
    for (const auto& s : live)
      if (s.config.contains("image") && s.config["image"].is_string())
        keep.insert(ImageStoreKey(s.org_id, s.config["image"].get<std::string>()));
    return keep;
  });
  if (!removed.ok()) {  // unsure what is used: nothing was removed
    spdlog::warn("image garbage collection: {}", removed.status().message());
    return;
  }
  for (const auto& r : *removed) spdlog::info("image garbage collection removed {}", r);
}

}  // namespace adapt::core
