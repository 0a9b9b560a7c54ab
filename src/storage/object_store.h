// ObjectStore: each organization's private object namespace on the local filesystem. The
// bytes of an object are a blob file named at random under <root>/blobs (written
// tmp + fsync + rename), its key, size, SHA-256, ETag and content type a row in the store.
// A blob is written before its row and removed after its row is gone, so a crash leaves at
// worst an unreferenced blob, which Init removes.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/keyed_mutexes.h"
#include "base/status.h"
#include "os/durable_file.h"
#include "storage/upload_ledger.h"
#include "store/object_record_store.h"

namespace adapt::storage {

// Fills `buf` with up to `n` bytes; 0 at the end, -1 when the source failed.
using ObjectSource = std::function<long(char* buf, size_t n)>;

constexpr uint64_t kMaxObjectBytes = 5ull << 30;  // 5 GiB, S3's single-PUT limit
constexpr int kMaxParts = 10000;
constexpr size_t kMaxListLimit = 1000;
// Unfinished multipart uploads one organization may have at once: each is a directory and a
// ledger entry that its quota does not count until it has parts.
constexpr size_t kMaxUnfinishedUploads = 10000;

struct ObjectListing {
  std::vector<store::ObjectRecord> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_after;  // pass as `after` for the next page when truncated
};

struct UploadedPart {
  int number = 0;
  uint64_t size = 0;
  std::string etag;         // hex MD5
  int64_t modified_at = 0;  // when it was stored (its file's mtime), ms since the epoch
};

struct CompletedPart {
  int number = 0;
  std::string etag;  // as the client was given it, quotes removed
};

// An unfinished multipart upload, as ListUploads shows it.
struct UnfinishedUpload {
  std::string key;
  std::string upload_id;
  int64_t created_at = 0;  // ms since the epoch
};

// Which of an organization's unfinished uploads ListUploads lists (S3's ListMultipartUploads).
struct UploadListQuery {
  std::string prefix;
  // Keys with it after the prefix roll up into one common prefix (up to and including it).
  std::string delimiter;
  // Only uploads of keys after it, and with `upload_id_marker`, also those of this very key
  // whose id comes after that one; the marker is ignored without a key marker. A common
  // prefix given as the key marker (a page's NextKeyMarker) skips every key under it.
  std::string key_marker;
  std::string upload_id_marker;
  size_t max = kMaxListLimit;  // entries (uploads and common prefixes), 1..1000
};

struct UploadListing {
  std::vector<UnfinishedUpload> uploads;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  // When truncated, the next page's markers: the last entry's key and upload id, or the last
  // common prefix with no id.
  std::string next_key_marker;
  std::string next_upload_id_marker;
};

class ObjectStore {
 public:
  ObjectStore(store::ObjectRecordStore& store, std::string root)
      : store_(store), root_(std::move(root)) {}

  // Creates the directories and removes what a crash left (temporary and unreferenced blobs,
  // half-written upload parts).
  Status Init();

  // Writes the object from `source`. When `expected_sha256` is set (SigV4's payload hash),
  // a body with another hash is refused and nothing changes.
  Result<store::ObjectRecord> Put(const std::string& org_id, const std::string& key,
                                  const std::string& content_type, const ObjectSource& source,
                                  const std::string& expected_sha256 = "");
  Result<store::ObjectRecord> Head(const std::string& org_id, const std::string& key);
  Result<std::pair<store::ObjectRecord, std::unique_ptr<os::FileReader>>> Open(
      const std::string& org_id, const std::string& key);
  Status Delete(const std::string& org_id, const std::string& key);
  // Keys under `prefix` after `after`, with keys sharing a `delimiter`-ended part after the
  // prefix rolled up into common prefixes (S3's ListObjectsV2).
  Result<ObjectListing> List(const std::string& org_id, const std::string& prefix,
                             const std::string& delimiter, const std::string& after, size_t limit);
  // Copies the object under a new key (its own blob).
  Result<store::ObjectRecord> Copy(const std::string& org_id, const std::string& from,
                                   const std::string& to);

  // Multipart uploads: parts are files under <root>/uploads/<id>/ until completed. Past
  // max_uploads_per_org() unfinished ones, kResourceExhausted.
  Result<std::string> CreateUpload(const std::string& org_id, const std::string& key,
                                   const std::string& content_type);
  // Returns the part's ETag (hex MD5). When `expected_sha256` is set (SigV4's payload hash),
  // a body with another hash is refused and the part (or the one it would replace) is kept
  // as it was.
  Result<std::string> PutPart(const std::string& org_id, const std::string& upload_id,
                              const std::string& key, int part_number, const ObjectSource& source,
                              const std::string& expected_sha256 = "");
  Result<store::ObjectRecord> CompleteUpload(const std::string& org_id,
                                             const std::string& upload_id, const std::string& key,
                                             const std::vector<CompletedPart>& parts);
  Status AbortUpload(const std::string& org_id, const std::string& upload_id,
                     const std::string& key);
  // The organization's unfinished uploads, in key order and, for one key, in upload id order,
  // which is the order they began in (ids start with their start time). Only the
  // organization's own uploads are read (the ledger knows whose each is); one completed,
  // aborted or expired meanwhile is left out.
  Result<UploadListing> ListUploads(const std::string& org_id, const UploadListQuery& query);
  // The parts uploaded so far, in part-number order, each with the time it was stored (S3's
  // ListParts).
  Result<std::vector<UploadedPart>> ListParts(const std::string& org_id,
                                              const std::string& upload_id, const std::string& key);
  // Removes every unfinished upload begun before `cutoff` (ms since the epoch) with its parts;
  // returns how many went.
  size_t ExpireUploads(int64_t cutoff);

  // The most bytes one organization's objects may hold (0: no limit), counting the parts of
  // its unfinished uploads and its writes in progress. A Put, a part or a completed upload
  // past it is refused with kResourceExhausted as soon as its bytes would pass it, and
  // changes nothing.
  void SetQuotaBytes(uint64_t bytes) { quota_bytes_ = bytes; }
  uint64_t quota_bytes() const { return quota_bytes_; }
  // The most unfinished multipart uploads one organization may have (0: no limit). Set
  // before serving.
  void SetMaxUploadsPerOrg(size_t n) { max_uploads_per_org_ = n; }
  size_t max_uploads_per_org() const { return max_uploads_per_org_; }
  // An organization's own limit in bytes (its plan's; nullopt: none), asked at each write;
  // the smaller of it and the quota above applies. Set before serving.
  using OrgQuota = std::function<std::optional<uint64_t>(const std::string& org_id)>;
  void SetOrgQuota(OrgQuota quota) { org_quota_ = std::move(quota); }
  // The quota that applies to `org_id` now (0: no limit).
  uint64_t QuotaOf(const std::string& org_id) const;
  // What counts against the quota: stored objects, site and app releases, parts of
  // unfinished uploads, writes.
  Result<uint64_t> UsedBytes(const std::string& org_id);
  // The most bytes the organization's stored objects and releases may hold now, once its
  // unfinished uploads and writes are set aside (0: no limit); kResourceExhausted when those
  // alone fill the quota. For a store transaction that checks the total (a site publish, an app
  // release).
  Result<uint64_t> QuotaForStored(const std::string& org_id) const {
    return QuotaForObjects(org_id, 0);
  }

  // Blobs for site and app releases: an independent copy, and reading one.
  Result<std::string> CopyBlob(const std::string& blob);
  Result<std::unique_ptr<os::FileReader>> OpenBlob(const std::string& blob);
  void RemoveBlob(const std::string& blob);
  // A deleted app's release blob, kept until `due_ms` (ms since the epoch): renamed to
  // <root>/retired/<due_ms>.<blob>, out of OpenBlob's reach and of Init's sweep of
  // unreferenced blobs, so that a restart still finds it and removes it when due.
  Status RetireBlob(const std::string& blob, int64_t due_ms);
  // Removes the retired blobs due by `now_ms`; returns how many went.
  size_t SweepRetiredBlobs(int64_t now_ms);
  // A new blob (outside every organization's keys) from `source`: kPayloadTooLarge, nothing
  // kept, past `max_bytes`. Returns its name, with its hex SHA-256 and size in the arguments.
  Result<std::string> PutBlob(const ObjectSource& source, uint64_t max_bytes, std::string* sha256,
                              uint64_t* size);

 private:
  std::string BlobPath(const std::string& blob) const { return root_ + "/blobs/" + blob; }
  // Put, for an object made of the parts of `upload_id` (or none): they are freed once it is
  // stored, so they do not count twice. `etag`, when set, gives the record's ETag once the
  // source has ended (a multipart upload's), so that the object is stored in one write.
  Result<store::ObjectRecord> PutCounted(const std::string& org_id, const std::string& key,
                                         const std::string& content_type,
                                         const ObjectSource& source,
                                         const std::string& expected_sha256,
                                         const std::string& upload_id,
                                         const std::function<std::string()>& etag = nullptr);
  // The quota left for stored objects once what the organization holds in the ledger,
  // besides `own` bytes, is set aside (0: no limit).
  Result<uint64_t> QuotaForObjects(const std::string& org_id, uint64_t own) const;
  // The organization's stored bytes (0 when there is no quota: nothing to check).
  Result<uint64_t> ObjectBytesIfLimited(const std::string& org_id);
  Result<std::string> UploadDir(const std::string& org_id, const std::string& upload_id,
                                const std::string& key);
  // Removes an ended upload's directory. REQUIRES: the upload's lock held.
  Status RemoveUploadDir(const std::string& dir);

  store::ObjectRecordStore& store_;
  std::string root_;
  uint64_t quota_bytes_ = 0;
  size_t max_uploads_per_org_ = kMaxUnfinishedUploads;
  OrgQuota org_quota_;
  UploadLedger ledger_;
  // Held by a complete and an abort for their whole run, and by a part while it is committed:
  // one ends an upload while nothing else of it changes (two aborts, or a part and an abort,
  // removing one directory together were 500s; two completes stored the object twice, the
  // first one's blob left behind outside every quota).
  KeyedMutexes<std::mutex> upload_locks_;
};

}  // namespace adapt::storage
