#include "core/secret_service.h"

#include <set>

#include "base/time.h"
#include "core/sandbox_request.h"
#include "core/secret_cipher.h"

namespace adapt::core {
namespace {

Secret View(const store::SecretRecord& r) {
  return {r.name, r.version, r.created_at, r.updated_at};
}

}  // namespace

SecretService::SecretService(store::SecretStore& store, std::string master_key)
    : store_(store), master_key_(std::move(master_key)) {}

namespace {

// A secret's idempotency record names the version it stored and the secret: "3:name".
std::string SecretCreateId(const store::SecretRecord& r) {
  return std::to_string(r.version) + ":" + r.name;
}

}  // namespace

Result<SavedSecret> SecretService::Set(const std::string& org_id, const SetSecret& request,
                                       const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(org_id, "secret", idempotency));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) return ReplaySet(org_id, *earlier);
  }
  const std::string& name = request.name;
  RETURN_IF_ERROR(ValidateSecretName(name, "name"));
  const std::string& value = request.value;
  if (value.size() > kMaxSecretValueBytes)
    return InvalidArgument("value", "value must be at most 32 KiB");
  if (value.find('\0') != std::string::npos)
    return InvalidArgument("value", "value must not contain NUL bytes");

  std::lock_guard creating(create_mu_);
  auto existing = store_.GetSecret(org_id, name);
  if (!existing.ok() && existing.status().code() != Code::kNotFound) return existing.status();
  if (!existing.ok()) {
    ASSIGN_OR_RETURN(auto all, store_.ListSecrets(org_id));
    if (all.size() >= kMaxSecretsPerOrg)
      return Status(Code::kResourceExhausted,
                    "the organization has " + std::to_string(kMaxSecretsPerOrg) +
                        " secrets, the most allowed; delete one first",
                    "name");
  }
  ASSIGN_OR_RETURN(std::string key, DeriveSecretKey(master_key_, org_id));
  store::SecretRecord r;
  r.org_id = org_id;
  r.name = name;
  ASSIGN_OR_RETURN(r.ciphertext, SealSecret(key, name, value));
  r.updated_at = NowMillis();
  if (!claim) {
    ASSIGN_OR_RETURN(store::SecretRecord saved, store_.PutSecret(r));
    return SavedSecret{View(saved), saved.version == 1};
  }
  store::SecretRecord saved;
  ASSIGN_OR_RETURN(store::IdempotentCreate made,
                   store_.CreateOnce(*claim, [&]() -> Result<std::string> {
                     ASSIGN_OR_RETURN(saved, store_.PutSecret(r));
                     return SecretCreateId(saved);
                   }));
  // A concurrent request with the key recorded it first: this one stored nothing.
  if (made.replayed) return ReplaySet(org_id, made.object_id);
  return SavedSecret{View(saved), saved.version == 1};
}

Result<SavedSecret> SecretService::ReplaySet(const std::string& org_id,
                                             const std::string& create_id) {
  size_t colon = create_id.find(':');
  std::string name = create_id.substr(colon + 1);
  auto now = store_.GetSecret(org_id, name);
  if (!now.ok() && now.status().code() == Code::kNotFound)
    return store::IdempotentObjectGone("secret '" + name + "'");
  if (!now.ok()) return now.status();
  return SavedSecret{View(*now), create_id.starts_with("1:")};
}

Result<Secret> SecretService::Get(const std::string& org_id, const std::string& name) {
  if (!ValidateSecretName(name, "name").ok()) return NotFound("secret '" + name + "' not found");
  ASSIGN_OR_RETURN(store::SecretRecord r, store_.GetSecret(org_id, name));
  return View(r);
}

Result<Page<Secret>> SecretService::List(const std::string& org_id, const PageRequest& page) {
  ASSIGN_OR_RETURN(auto all, store_.ListSecrets(org_id));
  ASSIGN_OR_RETURN(
      Page<store::SecretRecord> records,
      PageNewestFirst(std::move(all), page, [](const store::SecretRecord& r) { return r.seq; }));
  Page<Secret> out;
  for (const auto& r : records.items) out.items.push_back(View(r));
  out.next_cursor = records.next_cursor;
  return out;
}

Status SecretService::Delete(const std::string& org_id, const std::string& name) {
  if (!ValidateSecretName(name, "name").ok()) return NotFound("secret '" + name + "' not found");
  return store_.DeleteSecret(org_id, name);
}

Result<std::string> SecretService::Open(const store::SecretRecord& r) {
  ASSIGN_OR_RETURN(std::string key, DeriveSecretKey(master_key_, r.org_id));
  auto plain = OpenSecret(key, r.name, r.ciphertext);
  if (!plain.ok()) return Internal("secret '" + r.name + "': " + plain.status().message());
  return plain;
}

Result<std::vector<CapturedSecret>> SecretService::Capture(const std::string& org_id,
                                                           const std::vector<std::string>& names,
                                                           const std::string& field) {
  std::vector<CapturedSecret> out;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string f = field + "[" + std::to_string(i) + "]";
    auto r = store_.GetSecret(org_id, names[i]);
    if (!r.ok() && r.status().code() == Code::kNotFound)
      return InvalidArgument(f, "secret '" + names[i] +
                                    "' does not exist; create it with POST "
                                    "/v1/secrets or adapt secret set");
    if (!r.ok()) return r.status();
    ASSIGN_OR_RETURN(std::string value, Open(*r));
    out.push_back({r->name, r->version, std::move(value)});
  }
  return out;
}

Result<std::string> SecretService::Reveal(const std::string& org_id, const std::string& name,
                                          const std::string& field) {
  RETURN_IF_ERROR(ValidateSecretName(name, field));
  auto r = store_.GetSecret(org_id, name);
  if (!r.ok() && r.status().code() == Code::kNotFound)
    return InvalidArgument(field, "secret '" + name + "' does not exist");
  if (!r.ok()) return r.status();
  return Open(*r);
}

Status AttachSecrets(SecretService* secrets, const std::string& org_id, NewSandbox& req) {
  if (req.secrets.empty()) return Status::Ok();
  if (!secrets) return Unsupported("secrets", "secrets are not supported on this host");
  ASSIGN_OR_RETURN(auto captured, secrets->Capture(org_id, req.secrets, "secrets"));
  for (auto& c : captured) {
    req.config.secrets.push_back({c.name, c.version});
    req.env[c.name] = std::move(c.value);
  }
  return Status::Ok();
}

}  // namespace adapt::core
