#include "storage/upload_ledger.h"

#include <algorithm>

namespace adapt::storage {

Status UploadLedger::Reservation::Grow(uint64_t n, uint64_t object_bytes, uint64_t replaced,
                                       uint64_t quota) {
  std::lock_guard lock(ledger_.mu_);
  uint64_t& held = ledger_.held_[org_id_];
  if (quota > 0) {
    uint64_t counted = object_bytes + held;
    counted = counted > replaced ? counted - replaced : 0;
    if (counted + n > quota)
      return Status(Code::kResourceExhausted,
                    "object storage quota exceeded: the organization's objects and unfinished "
                    "uploads would hold more than " +
                        std::to_string(quota) + " bytes");
  }
  held += n;
  bytes_ += n;
  return Status::Ok();
}

void UploadLedger::Release(const std::string& org_id, uint64_t n) {
  if (n == 0) return;
  std::lock_guard lock(mu_);
  auto it = held_.find(org_id);
  if (it == held_.end()) return;
  it->second -= std::min(it->second, n);
  if (it->second == 0) held_.erase(it);
}

void UploadLedger::OpenUpload(const std::string& org_id, const std::string& upload_id) {
  std::lock_guard lock(mu_);
  std::string& owner = uploads_[upload_id].org_id;
  if (!owner.empty() && owner != org_id) ForgetOwner(owner, upload_id);
  owner = org_id;
  by_org_[org_id].insert(upload_id);
}

Status UploadLedger::BeginUpload(const std::string& org_id, const std::string& upload_id,
                                 size_t max) {
  std::lock_guard lock(mu_);
  auto mine = by_org_.find(org_id);
  if (max > 0 && mine != by_org_.end() && mine->second.size() >= max)
    return Status(Code::kResourceExhausted,
                  "the organization has " + std::to_string(max) +
                      " unfinished multipart uploads, the most it may; complete or abort one "
                      "first (unfinished uploads expire on their own too)");
  uploads_[upload_id].org_id = org_id;
  by_org_[org_id].insert(upload_id);
  return Status::Ok();
}

void UploadLedger::ForgetOwner(const std::string& org_id, const std::string& upload_id) {
  auto it = by_org_.find(org_id);
  if (it == by_org_.end()) return;
  it->second.erase(upload_id);
  if (it->second.empty()) by_org_.erase(it);
}

void UploadLedger::KeepPart(Reservation& reservation, const std::string& upload_id, int part) {
  uint64_t freed = 0;
  {
    std::lock_guard lock(mu_);
    auto it = uploads_.find(upload_id);
    if (it == uploads_.end() || it->second.org_id != reservation.org_id_) return;
    uint64_t& size = it->second.parts[part];
    freed = size;
    size = reservation.bytes_;
    reservation.bytes_ = 0;
  }
  Release(reservation.org_id_, freed);
}

void UploadLedger::AddPart(const std::string& upload_id, int part, uint64_t size) {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) return;
  uint64_t& old = it->second.parts[part];
  uint64_t& held = held_[it->second.org_id];
  held = held - std::min(held, old) + size;
  old = size;
}

void UploadLedger::DropUpload(const std::string& upload_id) {
  std::string org_id;
  uint64_t bytes = 0;
  {
    std::lock_guard lock(mu_);
    auto it = uploads_.find(upload_id);
    if (it == uploads_.end()) return;
    org_id = it->second.org_id;
    for (const auto& [part, size] : it->second.parts) bytes += size;
    ForgetOwner(org_id, upload_id);
    uploads_.erase(it);
  }
  Release(org_id, bytes);
}

std::vector<std::string> UploadLedger::UploadsOf(const std::string& org_id) const {
  std::lock_guard lock(mu_);
  auto it = by_org_.find(org_id);
  if (it == by_org_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

uint64_t UploadLedger::Held(const std::string& org_id) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(org_id);
  return it == held_.end() ? 0 : it->second;
}

uint64_t UploadLedger::UploadBytes(const std::string& upload_id) const {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) return 0;
  uint64_t bytes = 0;
  for (const auto& [part, size] : it->second.parts) bytes += size;
  return bytes;
}

uint64_t UploadLedger::PartBytes(const std::string& upload_id, int part) const {
  std::lock_guard lock(mu_);
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) return 0;
  auto p = it->second.parts.find(part);
  return p == it->second.parts.end() ? 0 : p->second;
}

}  // namespace adapt::storage
