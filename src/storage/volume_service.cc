#include "storage/volume_service.h"

#include <algorithm>
#include <set>

#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "os/files.h"
#include "storage/volume_key.h"
#include "storage/volume_request.h"

namespace adapt::storage {

VolumeService::VolumeService(store::VolumeStore& store, VolumeOptions options)
    : store_(store), options_(std::move(options)) {}

Status VolumeService::Init() { return os::MakeDirs(options_.root, 0700); }

void VolumeService::Reconcile() {
  std::lock_guard lock(mu_);
  auto all = store_.ListVolumes("");
  if (!all.ok()) {
    spdlog::error("storage: reconciling: {}", all.status().message());
    return;
  }
  std::set<std::string> known;
  for (auto& v : *all) {
    known.insert(v.id);
    if (v.status != "ready") {
      spdlog::info("storage {}: removing what a previous run left {}", v.id,
                   v.status == "creating" ? "half-made" : "half-deleted");
      RemoveLocked(v);
      continue;
    }
    Status st = OpenLocked(v);
    if (!st.ok()) spdlog::error("storage {}: cannot open: {}", v.id, st.message());
  }
  for (const auto& entry : os::ListDir(options_.root)) {
    std::string id = entry.substr(0, entry.find('.'));
    if (known.count(id) || !IsValidId(id, "vol")) continue;
    spdlog::info("storage {}: removing files no record owns", id);
    Status st = RemoveVolume(PathsOf(id));
    if (!st.ok()) spdlog::warn("storage {}: {}", id, st.message());
  }
}

void VolumeService::Shutdown() {
  std::lock_guard lock(mu_);
  auto all = store_.ListVolumes("");
  if (!all.ok()) return;
  for (const auto& v : *all) {
    auto users = store_.ListVolumeAttachments(v.org_id, v.name);
    if (!users.ok() || !users->empty()) continue;
    Status st = CloseVolume(PathsOf(v.id));
    if (!st.ok()) spdlog::warn("storage {}: unmounting: {}", v.id, st.message());
  }
}

Result<store::VolumeRecord> VolumeService::FindLocked(const std::string& org_id,
                                                      const std::string& name) {
  auto v = store_.GetVolumeByName(org_id, name);
  if (v.ok() || v.status().code() != Code::kNotFound || name != kDefaultVolumeName) return v;
  return MakeLocked(org_id, name, limits::kSizeMiBDefault);
}

Result<store::VolumeRecord> VolumeService::MakeLocked(
    const std::string& org_id, const std::string& name, int64_t size_mib,
    const std::optional<store::IdempotencyClaim>& claim) {
  ASSIGN_OR_RETURN(auto existing, store_.ListVolumes(org_id));
  if (existing.size() >= limits::kVolumesPerOrg)
    return Status(Code::kResourceExhausted, "an organization may hold at most " +
                                                std::to_string(limits::kVolumesPerOrg) +
                                                " storage volumes; delete one first");
  store::VolumeRecord v;
  v.id = NewId("vol");
  v.org_id = org_id;
  v.name = name;
  v.size_mib = size_mib;
  v.status = "creating";
  v.created_at = NowMillis();
  std::optional<int64_t> max_gib;
  if (storage_limit_) {
    ASSIGN_OR_RETURN(max_gib, storage_limit_(org_id));
  }
  // Recorded first: a crash from here on leaves a record the next start cleans up.
  RETURN_IF_ERROR(store_.PutVolume(v, max_gib));
  Status st = CreateVolumeImage(PathsOf(v.id), static_cast<uint64_t>(size_mib));
  if (st.ok()) st = OpenLocked(v);
  if (st.ok()) {
    v.status = "ready";
    // The key is recorded with the ready record: a failed create leaves no key behind, and
    // the caller's retry with it makes the volume.
    if (claim) {
      st = store_
               .CreateOnce(*claim,
                           [&]() -> Result<std::string> {
                             RETURN_IF_ERROR(store_.PutVolume(v));
                             return v.id;
                           })
               .status();
    } else {
      st = store_.PutVolume(v);
    }
  }
  if (!st.ok()) {
    spdlog::warn("storage {}: creating: {}", v.id, st.message());
    RemoveLocked(v);
    return st.WithContext("creating storage '" + name + "'");
  }
  spdlog::info("storage {}: created '{}' ({} MiB) for {}", v.id, name, size_mib, org_id);
  return v;
}

Status VolumeService::OpenLocked(store::VolumeRecord& v) {
  ASSIGN_OR_RETURN(std::string key, DeriveVolumeKey(options_.master_key, v.id));
  std::string expected = v.key_identifier;
  auto id = OpenVolume(PathsOf(v.id), key, expected);
  std::fill(key.begin(), key.end(), '\0');
  if (!id.ok()) return id.status();
  if (expected.empty()) v.key_identifier = *id;
  return Status::Ok();
}

void VolumeService::RemoveLocked(const store::VolumeRecord& v) {
  Status st = RemoveVolume(PathsOf(v.id));
  if (st.ok()) st = store_.DeleteVolume(v.id);
  if (!st.ok()) spdlog::error("storage {}: removing: {}", v.id, st.message());
}

Volume VolumeService::View(const store::VolumeRecord& v) {
  Volume out;
  out.id = v.id;
  out.name = v.name;
  out.size_mib = v.size_mib;
  if (auto usage = VolumeUsage(PathsOf(v.id)); usage.ok()) {
    out.used_bytes = usage->used_bytes;
    out.available_bytes = usage->avail_bytes;
  }
  out.status = v.status;
  out.is_default = v.name == kDefaultVolumeName;
  out.encrypted = true;
  out.mount_path = "/workspace";
  if (auto users = store_.ListVolumeAttachments(v.org_id, v.name); users.ok())
    for (const auto& u : *users) out.attachments.push_back({u.id, u.status});
  out.created_at = v.created_at;
  return out;
}

Result<Volume> VolumeService::Create(const std::string& org_id, const CreateVolumeRequest& request,
                                     const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(org_id, "volume", idempotency));
  ASSIGN_OR_RETURN(CreateVolumeRequest req, CheckCreateVolume(request));
  std::lock_guard lock(mu_);
  if (claim) {
    // Under mu_, so a concurrent request with the same key waits and then finds this one.
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) {
      ASSIGN_OR_RETURN(auto all, store_.ListVolumes(org_id));
      for (const auto& v : all)
        if (v.id == *earlier) return View(v);
      return store::IdempotentObjectGone("storage " + *earlier);
    }
  }
  auto existing = store_.GetVolumeByName(org_id, req.name);
  if (existing.ok()) return Conflict("storage '" + req.name + "' already exists");
  ASSIGN_OR_RETURN(store::VolumeRecord v, MakeLocked(org_id, req.name, *req.size_mib, claim));
  return View(v);
}

Result<VolumeList> VolumeService::List(const std::string& org_id, const PageRequest& page) {
  // Checked before the default volume is made: bad input changes nothing.
  RETURN_IF_ERROR(CheckPageLimit(page.limit));
  RETURN_IF_ERROR(ParseListCursor(page.cursor).status());
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(FindLocked(org_id, kDefaultVolumeName).status());
  ASSIGN_OR_RETURN(auto all, store_.ListVolumes(org_id));
  ASSIGN_OR_RETURN(auto rows, PageNewestFirst(std::move(all), page,
                                              [](const store::VolumeRecord& v) { return v.seq; }));
  VolumeList list;
  for (const auto& v : rows.items) list.items.push_back(View(v));
  list.next_cursor = std::move(rows.next_cursor);
  return list;
}

Result<Volume> VolumeService::Get(const std::string& org_id, const std::string& name) {
  if (!ValidateVolumeName(name).ok()) return NotFound("storage '" + name + "' not found");
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(store::VolumeRecord v, FindLocked(org_id, name));
  return View(v);
}

Status VolumeService::Delete(const std::string& org_id, const std::string& name,
                             const std::string& confirm) {
  if (name == kDefaultVolumeName) return CheckDeleteConfirmation(name, confirm);
  if (!ValidateVolumeName(name).ok()) return NotFound("storage '" + name + "' not found");
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(store::VolumeRecord v, store_.GetVolumeByName(org_id, name));
  RETURN_IF_ERROR(CheckDeleteConfirmation(name, confirm));
  // Marked before anything is removed; refused while a sandbox uses it.
  RETURN_IF_ERROR(store_.BeginDeleteVolume(org_id, v.id));
  if (on_deleting_) on_deleting_(v, NowMillis());
  Status st = RemoveVolume(PathsOf(v.id));
  if (!st.ok()) {
    spdlog::error("storage {}: deleting: {}", v.id, st.message());
    return st.WithContext("deleting storage '" + name + "' (retried at the next start)");
  }
  spdlog::info("storage {}: deleted '{}'", v.id, name);
  return store_.DeleteVolume(v.id);
}

Status VolumeService::DeleteAllOf(const std::string& org_id) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(auto volumes, store_.ListVolumes(org_id));
  for (const auto& v : volumes) {
    // One still being made (a create cut by a crash) is removed as start-up would remove it.
    if (v.status == "ready") {
      RETURN_IF_ERROR(store_.BeginDeleteVolume(org_id, v.id));
      if (on_deleting_) on_deleting_(v, NowMillis());
    }
    RETURN_IF_ERROR(RemoveVolume(PathsOf(v.id)).WithContext("deleting storage '" + v.name + "'"));
    RETURN_IF_ERROR(store_.DeleteVolume(v.id));
    spdlog::info("storage {}: deleted '{}' with its organization", v.id, v.name);
  }
  return Status::Ok();
}

Status VolumeService::CheckUsable(const std::string& org_id, const std::string& name) {
  std::lock_guard lock(mu_);
  auto v = FindLocked(org_id, name);
  if (!v.ok() && v.status().code() == Code::kNotFound)
    return Status(Code::kNotFound, "storage '" + name + "' not found", "storage");
  if (!v.ok()) return v.status();
  if (v->status != "ready") return Conflict("storage '" + name + "' is " + v->status);
  return Status::Ok();
}

Result<std::string> VolumeService::Attach(const std::string& org_id, const std::string& name) {
  std::lock_guard lock(mu_);
  return WorkspaceLocked(FindLocked(org_id, name), name);
}

Result<std::string> VolumeService::OpenForReading(const std::string& org_id,
                                                  const std::string& name) {
  std::lock_guard lock(mu_);
  return WorkspaceLocked(store_.GetVolumeByName(org_id, name), name);
}

Result<std::string> VolumeService::WorkspaceLocked(Result<store::VolumeRecord> found,
                                                   const std::string& name) {
  if (!found.ok() && found.status().code() == Code::kNotFound)
    return NotFound("storage '" + name + "' does not exist");
  if (!found.ok()) return found.status();
  if (found->status != "ready") return Conflict("storage '" + name + "' is " + found->status);
  RETURN_IF_ERROR(OpenLocked(*found).WithContext("opening storage '" + name + "'"));
  return PathsOf(found->id).workspace;
}

}  // namespace adapt::storage
