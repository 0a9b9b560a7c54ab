#include "storage/object_store.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "base/hex.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "os/files.h"
#include "storage/host_failure.h"
#include "storage/object_hash.h"
#include "storage/object_key.h"
#include "store/object_quota.h"

namespace adapt::storage {
namespace {

// What one read of a body brings at most: each read is a hand-over between threads (the
// connection's and the handler's), a write and a hash job, so fewer, larger reads cost less
// (bench/README.md, "storage"); 1 MiB is the memory one upload holds for it.
constexpr size_t kChunk = 1024 * 1024;

std::string NewBlobName() { return NewId("blob").substr(5); }

bool IsBlobName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

// An upload id that begins with its start time in fixed-width hex, so that id order is start
// order: S3 lists one key's uploads in the order they began, and resumes after an upload id
// marker, which may be gone by then, by comparing ids.
std::string NewUploadId(int64_t now_ms) {
  char stamp[20];
  std::snprintf(stamp, sizeof stamp, "%012llx", static_cast<unsigned long long>(now_ms));
  return "upl_" + std::string(stamp) + NewId("upl").substr(4);
}

// An ended upload's directory on its way out.
constexpr char kGoneSuffix[] = ".gone";

std::string PartName(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05d", n);
  return buf;
}

}  // namespace

Status ObjectStore::Init() {
  RETURN_IF_ERROR(os::MakeDirs(root_ + "/blobs", 0700));
  RETURN_IF_ERROR(os::MakeDirs(root_ + "/uploads", 0700));
  ASSIGN_OR_RETURN(auto referenced, store_.ListReferencedBlobs());
  std::set<std::string> keep(referenced.begin(), referenced.end());
  size_t removed = 0;
  for (const auto& name : os::ListDir(root_ + "/blobs")) {
    if (keep.count(name)) continue;
    // Temporary files of interrupted writes and blobs whose row was never written or is gone.
    if (os::RemoveFile(BlobPath(name)).ok()) ++removed;
  }
  if (removed) spdlog::info("object store: removed {} unreferenced blob files", removed);
  // An upload directory without its meta.json was cut short while being made: nobody has its id.
  // The parts of the others count against their organization's quota.
  size_t partial = 0;
  for (const auto& name : os::ListDir(root_ + "/uploads")) {
    const std::string dir = root_ + "/uploads/" + name;
    if (name.ends_with(kGoneSuffix) || !os::Exists(dir + "/meta.json")) {
      (void)os::RemoveTree(dir);
      continue;
    }
    // A part's `.tmp-*` (or an `.md5.tmp`, a `meta.json.tmp`): nothing writes before Init
    // returns, so each is a write a crash cut short. The part is uploaded again or never.
    for (const auto& file : os::ListDir(dir))
      if (file.find(".tmp") != std::string::npos && os::RemoveFile(dir + "/" + file).ok())
        ++partial;
    auto text = os::ReadFile(dir + "/meta.json");
    auto meta = nlohmann::json::parse(text.ok() ? *text : "", nullptr, false);
    if (!meta.is_object() || !meta.contains("org") || !meta["org"].is_string()) continue;
    ledger_.OpenUpload(meta["org"], name);
    for (const auto& part : os::ListDir(dir)) {
      if (part.size() != 5 || !std::all_of(part.begin(), part.end(), ::isdigit)) continue;
      auto reader = os::FileReader::Open(dir + "/" + part);
      if (reader.ok()) ledger_.AddPart(name, std::stoi(part), (*reader)->size());
    }
  }
  if (partial) spdlog::info("object store: removed {} half-written upload files", partial);
  return Status::Ok();
}

Result<uint64_t> ObjectStore::UsedBytes(const std::string& org_id) {
  ASSIGN_OR_RETURN(uint64_t objects, store_.ObjectBytes(org_id));
  return objects + ledger_.Held(org_id);
}

uint64_t ObjectStore::QuotaOf(const std::string& org_id) const {
  uint64_t quota = quota_bytes_;
  if (org_quota_) {
    std::optional<uint64_t> own = org_quota_(org_id);
    if (own && *own > 0 && (quota == 0 || *own < quota)) quota = *own;
  }
  return quota;
}

Result<uint64_t> ObjectStore::QuotaForObjects(const std::string& org_id, uint64_t own) const {
  const uint64_t quota = QuotaOf(org_id);
  if (quota == 0) return uint64_t{0};
  uint64_t held = ledger_.Held(org_id);
  uint64_t others = held > own ? held - own : 0;
  if (others >= quota)
    return Status(Code::kResourceExhausted,
                  "object storage quota exceeded: the organization's unfinished uploads hold " +
                      std::to_string(others) + " of its " + std::to_string(quota) + " bytes");
  return quota - others;
}

Result<uint64_t> ObjectStore::ObjectBytesIfLimited(const std::string& org_id) {
  if (QuotaOf(org_id) == 0) return uint64_t{0};
  return store_.ObjectBytes(org_id);
}

Result<store::ObjectRecord> ObjectStore::Put(const std::string& org_id, const std::string& key,
                                             const std::string& content_type,
                                             const ObjectSource& source,
                                             const std::string& expected_sha256) {
  return PutCounted(org_id, key, content_type, source, expected_sha256, "");
}

Result<store::ObjectRecord> ObjectStore::PutCounted(
    const std::string& org_id, const std::string& key, const std::string& content_type,
    const ObjectSource& source, const std::string& expected_sha256, const std::string& upload_id,
    const std::function<std::string()>& etag) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  RETURN_IF_ERROR(ValidateContentType(content_type));
  // Checked as the bytes arrive, so a write past the quota stops there, not after 5 GiB.
  const uint64_t quota = QuotaOf(org_id);
  ASSIGN_OR_RETURN(uint64_t objects, ObjectBytesIfLimited(org_id));
  const uint64_t parts = upload_id.empty() ? 0 : ledger_.UploadBytes(upload_id);
  uint64_t replaced = parts;
  if (quota > 0) {
    if (auto old = store_.GetObject(org_id, key); old.ok()) replaced += old->size;
  }
  UploadLedger::Reservation held(ledger_, org_id);
  std::string blob = NewBlobName();
  ASSIGN_OR_RETURN(auto writer, HostSide(os::DurableFileWriter::Create(BlobPath(blob))));
  ObjectHasher hasher;
  std::vector<char> buf(kChunk);
  for (;;) {
    long n = source(buf.data(), buf.size());
    if (n < 0) return Status(Code::kInvalidArgument, "the upload of " + key + " was cut short");
    if (n == 0) break;
    if (writer->written() + static_cast<uint64_t>(n) > kMaxObjectBytes)
      return Status(Code::kPayloadTooLarge, "object " + key + " is larger than 5 GiB");
    RETURN_IF_ERROR(held.Grow(static_cast<uint64_t>(n), objects, replaced, quota));
    RETURN_IF_ERROR(HostSide(hasher.UpdateAlongside(buf.data(), static_cast<size_t>(n), [&] {
      return writer->Write(buf.data(), static_cast<size_t>(n));
    })));
  }
  store::ObjectRecord rec;
  hasher.Finish(rec.sha256, rec.etag);
  if (!expected_sha256.empty() && expected_sha256 != rec.sha256)
    return InvalidArgument("x-amz-content-sha256",
                           "the body's SHA-256 does not match x-amz-content-sha256");
  RETURN_IF_ERROR(HostSide(writer->Commit()));
  if (etag) rec.etag = etag();
  rec.org_id = org_id;
  rec.key = key;
  rec.blob = blob;
  rec.size = writer->written();
  rec.content_type = content_type.empty() ? "application/octet-stream" : content_type;
  rec.created_at = NowMillis();
  ASSIGN_OR_RETURN(uint64_t left, QuotaForObjects(org_id, held.bytes() + parts));
  auto old = store_.PutObjectWithinQuota(rec, left);
  if (!old.ok()) {
    RemoveBlob(blob);
    return old.status();
  }
  if (!old->empty()) RemoveBlob(*old);
  return rec;
}

Result<store::ObjectRecord> ObjectStore::Head(const std::string& org_id, const std::string& key) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  return store_.GetObject(org_id, key);
}

Result<std::pair<store::ObjectRecord, std::unique_ptr<os::FileReader>>> ObjectStore::Open(
    const std::string& org_id, const std::string& key) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  // A concurrent overwrite may unlink the blob between the row and the open: read again.
  for (int attempt = 0; attempt < 3; ++attempt) {
    ASSIGN_OR_RETURN(auto rec, store_.GetObject(org_id, key));
    auto reader = os::FileReader::Open(BlobPath(rec.blob));
    if (reader.ok()) return std::make_pair(std::move(rec), std::move(*reader));
  }
  return NotFound("object " + key + " not found");
}

Status ObjectStore::Delete(const std::string& org_id, const std::string& key) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  ASSIGN_OR_RETURN(auto blob, store_.DeleteObject(org_id, key));
  RemoveBlob(blob);
  return Status::Ok();
}

Result<ObjectListing> ObjectStore::List(const std::string& org_id, const std::string& prefix,
                                        const std::string& delimiter, const std::string& after,
                                        size_t limit) {
  RETURN_IF_ERROR(ValidateObjectPrefix(prefix));
  if (delimiter.size() > 16)
    return InvalidArgument("delimiter", "delimiter is longer than 16 bytes");
  limit = std::clamp<size_t>(limit, 1, kMaxListLimit);
  ObjectListing out;
  std::string cursor = after;
  std::string rolled_up;  // the last common prefix: the rows under it are skipped
  size_t count = 0;
  for (;;) {
    // One row more than the page still takes: it tells whether the page is truncated. The
    // rows under a common prefix after it are skipped in the batch, and the next batch seeks
    // past them.
    const size_t want = limit - count + 1;
    ASSIGN_OR_RETURN(auto rows, store_.ListObjects(org_id, prefix, cursor, want));
    for (auto& rec : rows) {
      if (!rolled_up.empty() && rec.key.compare(0, rolled_up.size(), rolled_up) == 0) continue;
      if (count == limit) {
        out.truncated = true;
        return out;
      }
      ++count;
      size_t at = delimiter.empty() ? std::string::npos : rec.key.find(delimiter, prefix.size());
      if (at != std::string::npos) {
        rolled_up = rec.key.substr(0, at + delimiter.size());
        out.common_prefixes.push_back(rolled_up);
        cursor = rolled_up + "\xff";  // keys are UTF-8: no 0xff byte in any of them
      } else {
        cursor = rec.key;
        out.objects.push_back(std::move(rec));
      }
      out.next_after = cursor;
    }
    if (rows.size() < want) return out;
  }
}

Result<store::ObjectRecord> ObjectStore::Copy(const std::string& org_id, const std::string& from,
                                              const std::string& to) {
  ASSIGN_OR_RETURN(auto opened, Open(org_id, from));
  auto& reader = opened.second;
  return Put(org_id, to, opened.first.content_type,
             [&reader](char* buf, size_t n) { return reader->Read(buf, n); });
}

Result<std::string> ObjectStore::CreateUpload(const std::string& org_id, const std::string& key,
                                              const std::string& content_type) {
  RETURN_IF_ERROR(ValidateObjectKey(key));
  RETURN_IF_ERROR(ValidateContentType(content_type));
  const int64_t now = NowMillis();
  std::string id = NewUploadId(now);
  std::string dir = root_ + "/uploads/" + id;
  // Counted before anything is made: ListUploads skips it until its meta.json is there.
  RETURN_IF_ERROR(ledger_.BeginUpload(org_id, id, max_uploads_per_org_));
  nlohmann::json meta = {{"org", org_id}, {"key", key}, {"type", content_type}, {"created", now}};
  Status made = os::MakeDirs(dir, 0700);
  if (made.ok())
    made = os::WriteFileAtomic(dir + "/meta.json",
                               meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                               0600);
  if (!made.ok()) {
    (void)os::RemoveTree(dir);
    ledger_.DropUpload(id);
    return HostFailure(made);
  }
  return id;
}

Result<std::string> ObjectStore::UploadDir(const std::string& org_id, const std::string& upload_id,
                                           const std::string& key) {
  Status missing = Status(Code::kNotFound, "upload " + upload_id + " not found");
  if (!IsValidId(upload_id, "upl")) return missing;
  std::string dir = root_ + "/uploads/" + upload_id;
  auto text = os::ReadFile(dir + "/meta.json");
  if (!text.ok()) return missing;
  auto meta = nlohmann::json::parse(*text, nullptr, false);
  if (!meta.is_object() || meta.value("org", "") != org_id || meta.value("key", "") != key)
    return missing;
  return dir;
}

Result<std::string> ObjectStore::PutPart(const std::string& org_id, const std::string& upload_id,
                                         const std::string& key, int part_number,
                                         const ObjectSource& source,
                                         const std::string& expected_sha256) {
  if (part_number < 1 || part_number > kMaxParts)
    return InvalidArgument("partNumber", "partNumber must be 1..10000");
  ASSIGN_OR_RETURN(std::string dir, UploadDir(org_id, upload_id, key));
  const uint64_t quota = QuotaOf(org_id);
  ASSIGN_OR_RETURN(uint64_t objects, ObjectBytesIfLimited(org_id));
  const uint64_t replaced = ledger_.PartBytes(upload_id, part_number);
  // An abort (or the expiry) that ran meanwhile removed the directory: the upload is gone.
  auto failed = [&](const Status& st) {
    if (!os::Exists(dir + "/meta.json")) return NotFound("upload " + upload_id + " not found");
    return HostFailure(st);
  };
  UploadLedger::Reservation held(ledger_, org_id);
  auto created = os::DurableFileWriter::Create(dir + "/" + PartName(part_number));
  if (!created.ok()) return failed(created.status());
  auto writer = std::move(*created);
  ObjectHasher hasher;
  std::vector<char> buf(kChunk);
  for (;;) {
    long n = source(buf.data(), buf.size());
    if (n < 0) return Status(Code::kInvalidArgument, "the upload of a part was cut short");
    if (n == 0) break;
    if (writer->written() + static_cast<uint64_t>(n) > kMaxObjectBytes)
      return Status(Code::kPayloadTooLarge, "a part is larger than 5 GiB");
    RETURN_IF_ERROR(held.Grow(static_cast<uint64_t>(n), objects, replaced, quota));
    if (Status st = hasher.UpdateAlongside(
            buf.data(), static_cast<size_t>(n),
            [&] { return writer->Write(buf.data(), static_cast<size_t>(n)); });
        !st.ok())
      return failed(st);
  }
  std::string sha, md5;
  hasher.Finish(sha, md5);
  if (!expected_sha256.empty() && expected_sha256 != sha)
    return InvalidArgument("x-amz-content-sha256",
                           "the part's SHA-256 does not match x-amz-content-sha256");
  // Committed while no complete or abort of the upload runs: one that ended it meanwhile
  // leaves nothing to add to.
  auto upload_lock = upload_locks_.For(upload_id);
  std::lock_guard ending(*upload_lock);
  if (!os::Exists(dir + "/meta.json")) return NotFound("upload " + upload_id + " not found");
  if (Status st = writer->Commit(); !st.ok()) return failed(st);
  ledger_.KeepPart(held, upload_id, part_number);
  // Kept beside the part for ListParts, which must not read the part again.
  if (Status st = os::WriteFileAtomic(dir + "/" + PartName(part_number) + ".md5", md5, 0600);
      !st.ok())
    return failed(st);
  return md5;
}

Result<store::ObjectRecord> ObjectStore::CompleteUpload(const std::string& org_id,
                                                        const std::string& upload_id,
                                                        const std::string& key,
                                                        const std::vector<CompletedPart>& parts) {
  auto upload_lock = upload_locks_.For(upload_id);
  std::lock_guard ending(*upload_lock);
  ASSIGN_OR_RETURN(std::string dir, UploadDir(org_id, upload_id, key));
  if (parts.empty()) return InvalidArgument("parts", "a multipart upload needs at least one part");
  auto meta_text = os::ReadFile(dir + "/meta.json");
  auto meta = nlohmann::json::parse(meta_text.ok() ? *meta_text : "{}", nullptr, false);
  std::string type = meta.is_object() ? meta.value("type", "") : "";
  int previous = 0;
  std::string md5s;
  size_t index = 0;
  std::unique_ptr<os::FileReader> current;
  std::unique_ptr<ObjectHasher> part_hash;
  Status failed = Status::Ok();
  // Streams the parts one after the other into Put, checking each part's ETag as it ends.
  auto source = [&](char* buf, size_t n) -> long {
    for (;;) {
      if (!current) {
        if (index == parts.size()) return 0;
        const auto& p = parts[index];
        if (p.number <= previous) {
          failed = InvalidArgument("parts", "parts must be listed in increasing order");
          return -1;
        }
        previous = p.number;
        auto r = os::FileReader::Open(dir + "/" + PartName(p.number));
        if (!r.ok()) {
          failed =
              InvalidArgument("parts", "part " + std::to_string(p.number) + " was not uploaded");
          return -1;
        }
        current = std::move(*r);
        part_hash = std::make_unique<ObjectHasher>();
      }
      long got = current->Read(buf, n);
      if (got > 0) {
        part_hash->Update(buf, static_cast<size_t>(got));
        return got;
      }
      if (got < 0) {
        failed = Internal("reading a part of upload " + upload_id + " failed");
        return -1;
      }
      std::string sha, md5;
      part_hash->Finish(sha, md5);
      if (md5 != parts[index].etag) {
        failed =
            InvalidArgument("parts", "the ETag of part " + std::to_string(parts[index].number) +
                                         " does not match the uploaded part");
        return -1;
      }
      md5s += md5;
      current.reset();
      ++index;
    }
  };
  // S3's multipart ETag: MD5 of the parts' binary MD5s, then "-<count>". The hex is our own
  // ObjectHasher's, so it always decodes. Given to the one write that stores the object: a
  // second write of the record met a PUT of the key in between, pointing the key at a blob
  // that PUT had removed.
  auto etag = [&] {
    return Md5Hex(HexDecode(md5s).value_or("")) + "-" + std::to_string(parts.size());
  };
  auto rec = PutCounted(org_id, key, type, source, "", upload_id, etag);
  if (!failed.ok()) return failed;
  if (!rec.ok()) return rec.status();
  (void)RemoveUploadDir(dir);
  ledger_.DropUpload(upload_id);
  return rec;
}

Status ObjectStore::AbortUpload(const std::string& org_id, const std::string& upload_id,
                                const std::string& key) {
  auto upload_lock = upload_locks_.For(upload_id);
  std::lock_guard ending(*upload_lock);
  ASSIGN_OR_RETURN(std::string dir, UploadDir(org_id, upload_id, key));
  Status removed = RemoveUploadDir(dir);
  ledger_.DropUpload(upload_id);
  // Gone for the tenant either way (renamed away before its removal); what is left is swept.
  if (!removed.ok()) spdlog::warn("object store: {}", removed.message());
  return Status::Ok();
}

Status ObjectStore::RemoveUploadDir(const std::string& dir) {
  // Renamed first, in one step: a part being written (its file made before the lock, in the
  // directory) can then make nothing more in it, and UploadDir finds the upload gone at once.
  const std::string gone = dir + kGoneSuffix;
  if (!os::Rename(dir, gone).ok()) return os::RemoveTree(dir);
  return os::RemoveTree(gone);
}

Result<std::vector<UploadedPart>> ObjectStore::ListParts(const std::string& org_id,
                                                         const std::string& upload_id,
                                                         const std::string& key) {
  ASSIGN_OR_RETURN(std::string dir, UploadDir(org_id, upload_id, key));
  std::vector<UploadedPart> parts;
  for (const auto& name : os::ListDir(dir)) {
    if (name.size() != 5 || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    auto md5 = os::ReadFile(dir + "/" + name + ".md5");
    auto reader = os::FileReader::Open(dir + "/" + name);
    if (!md5.ok() || !reader.ok()) continue;  // being written now
    UploadedPart p;
    p.number = std::stoi(name);
    p.size = (*reader)->size();
    p.etag = *md5;
    p.modified_at = (*reader)->modified_ms();
    parts.push_back(p);
  }
  std::sort(parts.begin(), parts.end(),
            [](const UploadedPart& a, const UploadedPart& b) { return a.number < b.number; });
  return parts;
}

size_t ObjectStore::ExpireUploads(int64_t cutoff) {
  size_t removed = 0;
  for (const auto& name : os::ListDir(root_ + "/uploads")) {
    const std::string dir = root_ + "/uploads/" + name;
    // An ended upload whose removal failed (a part's write still had its file open there).
    if (name.ends_with(kGoneSuffix)) {
      (void)os::RemoveTree(dir);
      continue;
    }
    auto text = os::ReadFile(dir + "/meta.json");
    if (!text.ok()) continue;  // being made now, or Init's to remove
    auto meta = nlohmann::json::parse(*text, nullptr, false);
    if (!meta.is_object()) continue;
    if (!meta.contains("created") || !meta["created"].is_number_integer()) {
      // Begun before uploads recorded their start: its age counts from now.
      meta["created"] = NowMillis();
      (void)os::WriteFileAtomic(dir + "/meta.json",
                                meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                0600);
      continue;
    }
    if (meta["created"].get<int64_t>() >= cutoff) continue;
    auto upload_lock = upload_locks_.For(name);
    std::lock_guard ending(*upload_lock);
    if (!os::Exists(dir + "/meta.json")) continue;  // completed or aborted meanwhile
    if (RemoveUploadDir(dir).ok()) ++removed;
    ledger_.DropUpload(name);
  }
  if (removed) spdlog::info("object store: removed {} expired multipart uploads", removed);
  return removed;
}

Result<std::string> ObjectStore::CopyBlob(const std::string& blob) {
  if (!IsBlobName(blob)) return NotFound("blob not found");
  ASSIGN_OR_RETURN(auto reader, OpenBlob(blob));
  std::string copy = NewBlobName();
  ASSIGN_OR_RETURN(auto writer, HostSide(os::DurableFileWriter::Create(BlobPath(copy))));
  std::vector<char> buf(kChunk);
  for (;;) {
    long n = reader->Read(buf.data(), buf.size());
    if (n < 0) return Internal("reading blob " + blob + " failed");
    if (n == 0) break;
    RETURN_IF_ERROR(HostSide(writer->Write(buf.data(), static_cast<size_t>(n))));
  }
  RETURN_IF_ERROR(HostSide(writer->Commit()));
  return copy;
}

Result<std::unique_ptr<os::FileReader>> ObjectStore::OpenBlob(const std::string& blob) {
  if (!IsBlobName(blob)) return NotFound("blob not found");
  auto reader = os::FileReader::Open(BlobPath(blob));
  if (!reader.ok() && reader.status().code() == Code::kNotFound) return NotFound("blob not found");
  return HostSide(std::move(reader));
}

Result<std::string> ObjectStore::PutBlob(const ObjectSource& source, uint64_t max_bytes,
                                         std::string* sha256, uint64_t* size) {
  std::string blob = NewBlobName();
  ASSIGN_OR_RETURN(auto writer, HostSide(os::DurableFileWriter::Create(BlobPath(blob))));
  ObjectHasher hasher;
  std::vector<char> buf(kChunk);
  for (;;) {
    long n = source(buf.data(), buf.size());
    if (n < 0) return Internal("the blob's source failed");
    if (n == 0) break;
    if (writer->written() + static_cast<uint64_t>(n) > max_bytes)
      return Status(Code::kPayloadTooLarge,
                    "larger than " + std::to_string(max_bytes >> 20) + " MiB");
    RETURN_IF_ERROR(HostSide(hasher.UpdateAlongside(buf.data(), static_cast<size_t>(n), [&] {
      return writer->Write(buf.data(), static_cast<size_t>(n));
    })));
  }
  std::string md5;
  hasher.Finish(*sha256, md5);
  *size = writer->written();
  RETURN_IF_ERROR(HostSide(writer->Commit()));
  return blob;
}

Status ObjectStore::RetireBlob(const std::string& blob, int64_t due_ms) {
  if (!IsBlobName(blob)) return NotFound("blob not found");
  RETURN_IF_ERROR(HostSide(os::MakeDirs(root_ + "/retired", 0700)));
  if (!os::Exists(BlobPath(blob))) return Status::Ok();  // retired already, or gone
  return HostSide(
      os::Rename(BlobPath(blob), root_ + "/retired/" + std::to_string(due_ms) + "." + blob));
}

size_t ObjectStore::SweepRetiredBlobs(int64_t now_ms) {
  size_t removed = 0;
  for (const auto& name : os::ListDir(root_ + "/retired")) {
    size_t dot = name.find('.');
    int64_t due = 0;
    try {
      due = std::stoll(name.substr(0, dot));
    } catch (...) {
      continue;  // not one of ours
    }
    if (dot == std::string::npos || due > now_ms) continue;
    Status st = os::RemoveFile(root_ + "/retired/" + name);
    if (st.ok()) {
      ++removed;
    } else {
      spdlog::warn("object store: {}", st.message());
    }
  }
  return removed;
}

void ObjectStore::RemoveBlob(const std::string& blob) {
  if (!IsBlobName(blob)) return;
  Status st = os::RemoveFile(BlobPath(blob));
  if (!st.ok()) spdlog::warn("object store: {}", st.message());
}

}  // namespace adapt::storage
