// UploadLedger: the bytes each organization holds outside its stored objects, so that they
// count against its object quota too: the parts of unfinished multipart uploads, and the
// object or part writes in progress; and which unfinished uploads are whose, so that listing
// an organization's uploads reads only its own. In memory: rebuilt from the upload
// directories at start. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace adapt::storage {

class UploadLedger {
 public:
  // The bytes one write has reserved so far; released when it goes, unless KeepPart took them.
  class Reservation {
   public:
    Reservation(UploadLedger& ledger, std::string org_id)
        : ledger_(ledger), org_id_(std::move(org_id)) {}
    ~Reservation() { ledger_.Release(org_id_, bytes_); }
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;

    // Reserves `n` more bytes when the organization's stored objects (`object_bytes`), plus
    // all it holds here, minus the `replaced` bytes this write will free, plus `n` stay within
    // `quota` (0: no limit); kResourceExhausted otherwise, and nothing is reserved.
    Status Grow(uint64_t n, uint64_t object_bytes, uint64_t replaced, uint64_t quota);
    uint64_t bytes() const { return bytes_; }

   private:
    friend class UploadLedger;
    UploadLedger& ledger_;
    const std::string org_id_;
    uint64_t bytes_ = 0;
  };

  // An upload found at start for `org_id`.
  void OpenUpload(const std::string& org_id, const std::string& upload_id);
  // An upload begun for `org_id`, unless the organization has `max` unfinished uploads
  // already (0: no limit): kResourceExhausted then, and nothing is recorded. Counted under
  // the ledger's lock, so concurrent begins cannot pass `max` together.
  Status BeginUpload(const std::string& org_id, const std::string& upload_id, size_t max);
  // The reservation's bytes are now part `part` of the upload, replacing (and releasing) an
  // earlier part of that number. When the upload is gone meanwhile, they are released.
  void KeepPart(Reservation& reservation, const std::string& upload_id, int part);
  // A part found on disk at start.
  void AddPart(const std::string& upload_id, int part, uint64_t size);
  // Releases every part of the upload (completed, aborted or expired).
  void DropUpload(const std::string& upload_id);

  // The ids of the organization's unfinished uploads, in id order.
  std::vector<std::string> UploadsOf(const std::string& org_id) const;

  uint64_t Held(const std::string& org_id) const;
  uint64_t UploadBytes(const std::string& upload_id) const;
  uint64_t PartBytes(const std::string& upload_id, int part) const;

 private:
  void Release(const std::string& org_id, uint64_t n);
  // Removes `upload_id` from the organization's ids. REQUIRES: mu_ held.
  void ForgetOwner(const std::string& org_id, const std::string& upload_id);

  struct Upload {
    std::string org_id;
    std::map<int, uint64_t> parts;  // part number -> bytes
  };
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> held_;                 // org id -> bytes
  std::map<std::string, Upload> uploads_;                // upload id -> its parts
  std::map<std::string, std::set<std::string>> by_org_;  // org id -> its upload ids
};

}  // namespace adapt::storage
