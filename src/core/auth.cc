#include "core/auth.h"

#include "base/ids.h"
#include "base/text.h"
#include "base/time.h"
#include "os/files.h"

namespace adapt::core {
namespace {

constexpr const char* kAdminOrg = "admin";

Status RequireAdmin(const Principal& who) {
  if (!who.is_admin) return Status(Code::kPermissionDenied, "this action needs the admin key");
  return Status::Ok();
}

Status CheckKeyName(const std::string& name) {
  if (name.size() > 63) return InvalidArgument("name", "name must be at most 63 characters");
  if (HasControlCharacter(name))
    return InvalidArgument("name", "a key's name cannot hold control characters");
  return Status::Ok();
}

// The expiry (ms since the epoch) of a key made now; 0 for none.
Result<int64_t> ExpiryFor(std::optional<int64_t> ttl_seconds) {
  if (!ttl_seconds) return int64_t{0};
  if (*ttl_seconds < 1 || *ttl_seconds > kMaxKeyTtlSeconds)
    return InvalidArgument("ttlSeconds", "ttlSeconds must be between 1 and " +
                                             std::to_string(kMaxKeyTtlSeconds) +
                                             " (about five years), or left out for no expiry");
  return NowMillis() + *ttl_seconds * 1000;
}

// Ids of other organizations answer like ids that do not exist, so they leak nothing.
Status RequireAdminOrSameOrg(const Principal& who, const std::string& org_id) {
  if (who.is_admin || who.org_id == org_id) return Status::Ok();
  return NotFound("organization " + org_id + " not found");
}

}  // namespace

Status Auth::Bootstrap(const std::string& key_file) {
  if (store_.FindOrgByName(kAdminOrg).ok() && os::Exists(key_file)) return Status::Ok();
  auto org = store_.FindOrgByName(kAdminOrg);
  if (!org.ok()) {
    org = store_.CreateOrg({NewId("org"), kAdminOrg, true, NowMillis()});
    if (!org.ok()) return org.status();
  }
  // The key file is written before the hash is stored: a crash between the two leaves a
  // file that a restart replaces, never a key nobody can read.
  std::string key = "adapt_" + RandomToken(40);
  RETURN_IF_ERROR(
      os::WriteFileAtomic(key_file, key + "\n", 0600).WithContext("writing the admin key"));
  return store_.CreateApiKey({NewId("key"), org->id, "admin", Sha256Hex(key), true, NowMillis()});
}

Result<Principal> Auth::Authenticate(const std::string& bearer_key) {
  if (bearer_key.empty())
    return Status(Code::kUnauthenticated, "missing API key: send Authorization: Bearer <key>");
  auto key = store_.FindApiKey(Sha256Hex(bearer_key));
  if (!key.ok()) {
    if (key.status().code() == Code::kNotFound)
      return Status(Code::kUnauthenticated, "invalid API key");
    return key.status();
  }
  if (key->expires_at != 0 && key->expires_at <= NowMillis())
    return Status(Code::kUnauthenticated,
                  "this API key expired at " + FormatRfc3339(key->expires_at));
  ASSIGN_OR_RETURN(auto org, store_.GetOrg(key->org_id));
  return Principal{key->org_id, key->id, key->is_admin, org.registered};
}

Result<std::optional<std::string>> Auth::ClaimKey(const Principal& who, const std::string& scope,
                                                  const std::optional<store::IdempotencyKey>& key,
                                                  std::optional<store::IdempotencyClaim>& claim) {
  ASSIGN_OR_RETURN(claim, store::ClaimFor(who.org_id, scope, key));
  if (!claim) return std::optional<std::string>();
  return store_.FindIdempotentCreate(*claim);
}

Result<store::OrgRecord> Auth::CreateOrg(const Principal& who, const std::string& name,
                                         const std::optional<store::IdempotencyKey>& idempotency) {
  RETURN_IF_ERROR(RequireAdmin(who));
  std::optional<store::IdempotencyClaim> claim;
  ASSIGN_OR_RETURN(std::optional<std::string> earlier, ClaimKey(who, "org", idempotency, claim));
  if (earlier) {
    auto org = store_.GetOrg(*earlier);
    if (!org.ok() && org.status().code() == Code::kNotFound)
      return store::IdempotentObjectGone("organization " + *earlier);
    return org;
  }
  if (name.empty() || name.size() > 63)
    return InvalidArgument("name", "name must be 1 to 63 characters");
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return InvalidArgument("name", "name may hold only a-z, 0-9, '-' and '_'");
  }
  store::OrgRecord org{NewId("org"), name, false, NowMillis()};
  if (!claim) return store_.CreateOrg(org);
  ASSIGN_OR_RETURN(store::IdempotentCreate made,
                   store_.CreateOnce(*claim, [&]() -> Result<std::string> {
                     ASSIGN_OR_RETURN(org, store_.CreateOrg(org));
                     return org.id;
                   }));
  if (made.replayed) return store_.GetOrg(made.object_id);
  return org;
}

Result<Page<store::OrgRecord>> Auth::ListOrgs(const Principal& who, const PageRequest& page) {
  RETURN_IF_ERROR(RequireAdmin(who));
  ASSIGN_OR_RETURN(auto orgs, store_.ListOrgs());
  return PageNewestFirst(std::move(orgs), page, [](const store::OrgRecord& o) { return o.seq; });
}

Result<NewApiKey> Auth::CreateKey(const Principal& who, const std::string& org_id,
                                  const std::string& name, std::optional<int64_t> ttl_seconds,
                                  const std::optional<store::IdempotencyKey>& idempotency) {
  RETURN_IF_ERROR(RequireAdmin(who));
  std::optional<store::IdempotencyClaim> claim;
  ASSIGN_OR_RETURN(std::optional<std::string> earlier,
                   ClaimKey(who, "api_key", idempotency, claim));
  if (earlier) return MadeApiKey(org_id, *earlier);
  RETURN_IF_ERROR(CheckKeyName(name));
  ASSIGN_OR_RETURN(int64_t expires_at, ExpiryFor(ttl_seconds));
  auto org = store_.GetOrg(org_id);
  if (!org.ok()) return org.status();
  return MakeKey(org->id, name.empty() ? "key" : name, false, expires_at, claim);
}

Result<Page<store::ApiKeyRecord>> Auth::ListKeys(const Principal& who, const std::string& org_id,
                                                 const PageRequest& page) {
  RETURN_IF_ERROR(RequireAdminOrSameOrg(who, org_id));
  RETURN_IF_ERROR(store_.GetOrg(org_id).status());
  ASSIGN_OR_RETURN(auto keys, store_.ListApiKeys(org_id));
  return PageNewestFirst(std::move(keys), page, [](const store::ApiKeyRecord& k) { return k.seq; });
}

Status Auth::DeleteKey(const Principal& who, const std::string& org_id, const std::string& key_id) {
  RETURN_IF_ERROR(RequireAdminOrSameOrg(who, org_id));
  ASSIGN_OR_RETURN(auto keys, store_.ListApiKeys(org_id));
  for (const auto& k : keys) {
    if (k.id != key_id) continue;
    if (k.is_admin) return Conflict("the admin key cannot be deleted");
    return store_.DeleteApiKey(org_id, key_id);
  }
  return NotFound("API key " + key_id + " not found");
}

Result<NewApiKey> Auth::CreateOwnKey(const Principal& who, const CreateKeyRequest& request,
                                     const std::optional<store::IdempotencyKey>& idempotency) {
  std::optional<store::IdempotencyClaim> claim;
  ASSIGN_OR_RETURN(std::optional<std::string> earlier,
                   ClaimKey(who, "api_key", idempotency, claim));
  if (earlier) return MadeApiKey(who.org_id, *earlier);
  RETURN_IF_ERROR(CheckKeyName(request.name));
  ASSIGN_OR_RETURN(int64_t expires_at, ExpiryFor(request.ttl_seconds));
  ASSIGN_OR_RETURN(auto keys, store_.ListApiKeys(who.org_id));
  if (keys.size() >= kMaxKeysPerOrg)
    return Status(Code::kResourceExhausted, "the organization has " +
                                                std::to_string(kMaxKeysPerOrg) +
                                                " API keys, the most allowed; revoke one first");
  return MakeKey(who.org_id, request.name.empty() ? "key" : request.name, false, expires_at, claim);
}

Result<Page<store::ApiKeyRecord>> Auth::ListOwnKeys(const Principal& who, const PageRequest& page) {
  ASSIGN_OR_RETURN(auto keys, store_.ListApiKeys(who.org_id));
  return PageNewestFirst(std::move(keys), page, [](const store::ApiKeyRecord& k) { return k.seq; });
}

Status Auth::RevokeOwnKey(const Principal& who, const std::string& key_id) {
  return DeleteKey(who, who.org_id, key_id);
}

Result<NewApiKey> Auth::MakeKey(const std::string& org_id, const std::string& name, bool is_admin,
                                int64_t expires_at,
                                const std::optional<store::IdempotencyClaim>& claim) {
  NewApiKey out;
  out.key = "adapt_" + RandomToken(40);
  out.record = {NewId("key"), org_id, name, Sha256Hex(out.key), is_admin, NowMillis(), expires_at};
  if (!claim) {
    RETURN_IF_ERROR(store_.CreateApiKey(out.record));
    return out;
  }
  ASSIGN_OR_RETURN(store::IdempotentCreate made,
                   store_.CreateOnce(*claim, [&]() -> Result<std::string> {
                     RETURN_IF_ERROR(store_.CreateApiKey(out.record));
                     return out.record.id;
                   }));
  if (made.replayed) return MadeApiKey(org_id, made.object_id);
  return out;
}

Result<NewApiKey> Auth::MadeApiKey(const std::string& org_id, const std::string& id) {
  ASSIGN_OR_RETURN(auto keys, store_.ListApiKeys(org_id));
  for (const auto& k : keys) {
    if (k.id != id) continue;
    NewApiKey out;
    out.record = k;
    out.replayed = true;
    return out;
  }
  return store::IdempotentObjectGone("API key " + id);
}

}  // namespace adapt::core
