#include "storage/storage_tokens.h"

#include "base/constant_time.h"
#include "base/hex.h"
#include "base/ids.h"
#include "base/percent.h"
#include "base/text.h"
#include "base/time.h"
#include "os/files.h"
#include "storage/object_hash.h"

namespace adapt::storage {
namespace {

Status Unauthenticated() {
  return Status(Code::kUnauthenticated, "the storage token is unknown, expired or revoked");
}

}  // namespace

Status StorageTokens::Init() {
  if (os::Exists(key_file_)) {
    ASSIGN_OR_RETURN(key_, os::ReadFile(key_file_));
    if (key_.size() < 32) return Internal(key_file_ + " is too short to be a storage key");
    return Status::Ok();
  }
  key_ = RandomToken(48);
  return os::WriteFileAtomic(key_file_, key_, 0600);
}

std::string StorageTokens::SecretOf(const std::string& id) const {
  return HexEncode(HmacSha256(key_, "storage-token\n" + id)).substr(0, 40);
}

Result<NewStorageToken> StorageTokens::Create(
    const std::string& org_id, const std::string& name, int64_t ttl_seconds,
    const std::string& sandbox_id, const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(org_id, "storage_token", idempotency));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) return MadeToken(org_id, *earlier);
  }
  if (ttl_seconds < 1 || ttl_seconds > kMaxTokenTtlSeconds)
    return InvalidArgument("ttlSeconds", "ttlSeconds must be 1..2592000 (30 days)");
  if (name.size() > 128) return InvalidArgument("name", "name is longer than 128 bytes");
  if (HasControlCharacter(name))
    return InvalidArgument("name", "a token's name cannot hold control characters");
  NewStorageToken out;
  auto& r = out.record;
  r.id = NewId("stk");
  r.org_id = org_id;
  r.sandbox_id = sandbox_id;
  r.name = name;
  r.created_at = NowMillis();
  r.expires_at = r.created_at + ttl_seconds * 1000;
  if (claim) {
    ASSIGN_OR_RETURN(store::IdempotentCreate made,
                     store_.CreateOnce(*claim, [&]() -> Result<std::string> {
                       RETURN_IF_ERROR(store_.PutStorageToken(r));
                       return r.id;
                     }));
    if (made.replayed) return MadeToken(org_id, made.object_id);
  } else {
    RETURN_IF_ERROR(store_.PutStorageToken(r));
  }
  out.secret = SecretOf(r.id);
  out.token = r.id + "." + out.secret;
  return out;
}

Result<NewStorageToken> StorageTokens::MadeToken(const std::string& org_id, const std::string& id) {
  auto r = store_.GetStorageToken(id);
  if (!r.ok() && r.status().code() != Code::kNotFound) return r.status();
  if (!r.ok() || r->org_id != org_id) return store::IdempotentObjectGone("storage token " + id);
  NewStorageToken out;
  out.record = *r;
  out.replayed = true;
  return out;
}

Result<std::vector<store::StorageTokenRecord>> StorageTokens::List(const std::string& org_id) {
  return store_.ListStorageTokens(org_id);
}

Result<Page<store::StorageTokenRecord>> StorageTokens::List(const std::string& org_id,
                                                            const PageRequest& page) {
  ASSIGN_OR_RETURN(auto tokens, store_.ListStorageTokens(org_id));
  return PageNewestFirst(std::move(tokens), page,
                         [](const store::StorageTokenRecord& t) { return t.seq; });
}

Status StorageTokens::Revoke(const std::string& org_id, const std::string& id) {
  if (!IsValidId(id, "stk")) return NotFound("storage token " + id + " not found");
  return store_.RevokeStorageToken(org_id, id, NowMillis());
}

Result<store::StorageTokenRecord> StorageTokens::Active(const std::string& id) {
  if (!IsValidId(id, "stk")) return Unauthenticated();
  auto rec = store_.GetStorageToken(id);
  if (!rec.ok()) return Unauthenticated();
  if (rec->revoked_at != 0 || rec->expires_at <= NowMillis()) return Unauthenticated();
  return rec;
}

Result<store::StorageTokenRecord> StorageTokens::VerifyBearer(const std::string& token) {
  size_t dot = token.find('.');
  if (dot == std::string::npos) return Unauthenticated();
  std::string id = token.substr(0, dot);
  if (!ConstantTimeEquals(SecretOf(id), token.substr(dot + 1))) return Unauthenticated();
  return Active(id);
}

std::string StorageTokens::SignDownload(const std::string& org_id, const std::string& key,
                                        int64_t expires_at) const {
  std::string sig = HexEncode(
      HmacSha256(key_, "download\n" + org_id + "\n" + key + "\n" + std::to_string(expires_at)));
  return "org=" + PercentEncode(org_id) + "&key=" + PercentEncode(key) +
         "&expires=" + std::to_string(expires_at) + "&signature=" + sig;
}

Status StorageTokens::VerifyDownload(const std::string& org_id, const std::string& key,
                                     int64_t expires_at, const std::string& signature) const {
  std::string want = HexEncode(
      HmacSha256(key_, "download\n" + org_id + "\n" + key + "\n" + std::to_string(expires_at)));
  if (!ConstantTimeEquals(want, signature))
    return Status(Code::kUnauthenticated, "the download link's signature is not valid");
  if (expires_at * 1000 <= NowMillis())
    return Status(Code::kPermissionDenied, "the download link has expired");
  return Status::Ok();
}

std::string StorageTokens::SignRelease(const std::string& org_id, const std::string& blob,
                                       int64_t expires_at) const {
  std::string sig = HexEncode(
      HmacSha256(key_, "release\n" + org_id + "\n" + blob + "\n" + std::to_string(expires_at)));
  return "org=" + PercentEncode(org_id) + "&expires=" + std::to_string(expires_at) +
         "&signature=" + sig;
}

Status StorageTokens::VerifyRelease(const std::string& org_id, const std::string& blob,
                                    int64_t expires_at, const std::string& signature) const {
  std::string want = HexEncode(
      HmacSha256(key_, "release\n" + org_id + "\n" + blob + "\n" + std::to_string(expires_at)));
  if (!ConstantTimeEquals(want, signature))
    return Status(Code::kUnauthenticated, "the release reference's signature is not valid");
  if (expires_at * 1000 <= NowMillis())
    return Status(Code::kPermissionDenied, "the release reference has expired");
  return Status::Ok();
}

}  // namespace adapt::storage
