#include "core/users.h"

#include "base/ids.h"
#include "base/time.h"
#include "core/password_hash.h"

namespace adapt::core {
namespace {

constexpr char kWrongCredentials[] = "that email and password do not match an account";

bool IsAllowedEmailChar(unsigned char c) { return c > 0x20 && c < 0x7f && c != '"' && c != '\\'; }

// The organization name a sign-up gets: the email's local part made safe, and a random
// suffix so two people named alice get two organizations.
std::string SignUpOrgName(const std::string& email) {
  std::string base;
  for (char c : email.substr(0, email.find('@'))) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    base += ok ? c : '-';
    if (base.size() == 40) break;
  }
  std::string suffix = NewId("u").substr(2, 8);
  return (base.empty() ? "user" : base) + "-" + suffix;
}

// Holds one of the KDF's slots while it lives.
class HashSlot {
 public:
  explicit HashSlot(std::atomic<int>& count) : count_(count) {
    held_ = count_.fetch_add(1) < Users::kMaxConcurrentHashes;
  }
  ~HashSlot() { count_.fetch_sub(1); }
  bool held() const { return held_; }

 private:
  std::atomic<int>& count_;
  bool held_ = false;
};

Status Busy() {
  return Status(Code::kUnavailable, "too many sign-ins are being checked at once; try again");
}

}  // namespace

Result<std::string> NormalizeEmail(const std::string& email) {
  size_t b = email.find_first_not_of(" \t\r\n");
  size_t e = email.find_last_not_of(" \t\r\n");
  std::string out = b == std::string::npos ? "" : email.substr(b, e - b + 1);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  auto bad = [] {
    return InvalidArgument("email", "email must be an address like name@example.com");
  };
  if (out.size() < 5 || out.size() > 254) return bad();
  for (char c : out)
    if (!IsAllowedEmailChar(static_cast<unsigned char>(c))) return bad();
  size_t at = out.find('@');
  if (at == 0 || at == std::string::npos || out.find('@', at + 1) != std::string::npos)
    return bad();
  std::string domain = out.substr(at + 1);
  size_t dot = domain.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == domain.size() ||
      domain.find("..") != std::string::npos)
    return bad();
  return out;
}

Status CheckPassword(const std::string& password) {
  if (password.size() < 10)
    return InvalidArgument("password", "password must be at least 10 characters");
  if (password.size() > 1024)
    return InvalidArgument("password", "password must be at most 1024 bytes");
  return Status::Ok();
}

Users::Users(store::Store& store) : store_(store) {
  // A fresh random password: nobody's, and its hash costs what a user's does.
  auto decoy = HashPassword(RandomToken(24));
  if (decoy.ok()) decoy_hash_ = *decoy;
}

Result<std::string> Users::Hash(const std::string& password) {
  HashSlot slot(hashing_);
  if (!slot.held()) return Busy();
  return HashPassword(password);
}

Result<NewUser> Users::Add(const Principal& who, const std::string& org_id,
                           const std::string& email, const std::string& password) {
  if (!who.is_admin) return Status(Code::kPermissionDenied, "this action needs the admin key");
  ASSIGN_OR_RETURN(std::string normalized, NormalizeEmail(email));
  NewUser out;
  if (password.empty()) {
    out.password = RandomToken(18);
  } else {
    RETURN_IF_ERROR(CheckPassword(password));
  }
  RETURN_IF_ERROR(store_.GetOrg(org_id).status());
  ASSIGN_OR_RETURN(std::string hash, Hash(out.password.empty() ? password : out.password));
  out.record = {NewId("usr"), org_id, normalized, hash, NowMillis()};
  RETURN_IF_ERROR(store_.CreateUser(out.record));
  return out;
}

Result<Page<store::UserRecord>> Users::List(const Principal& who, const std::string& org_id,
                                            const PageRequest& page) {
  if (!who.is_admin) return Status(Code::kPermissionDenied, "this action needs the admin key");
  if (!org_id.empty()) RETURN_IF_ERROR(store_.GetOrg(org_id).status());
  ASSIGN_OR_RETURN(auto users, store_.ListUsers(org_id));
  return PageNewestFirst(std::move(users), page, [](const store::UserRecord& u) { return u.seq; });
}

Result<store::UserRecord> Users::Delete(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::UserRecord user, store_.GetUser(id));
  if (!who.is_admin && user.org_id != who.org_id) return NotFound("user '" + id + "' not found");
  return store_.DeleteUser(id);
}

Status Users::ChangePassword(const Principal& who, const std::string& id,
                             const std::string& password, const std::string& current_password) {
  ASSIGN_OR_RETURN(store::UserRecord user, store_.GetUser(id));
  if (!who.is_admin && user.org_id != who.org_id) return NotFound("user '" + id + "' not found");
  if (!who.is_admin && who.key_id != id)
    return Status(Code::kPermissionDenied,
                  "only the user itself or the admin key may change a user's password");
  RETURN_IF_ERROR(CheckPassword(password));
  if (!who.is_admin) {
    if (current_password.empty())
      return InvalidArgument("currentPassword",
                             "currentPassword is required to change your own password");
    HashSlot slot(hashing_);
    if (!slot.held()) return Busy();
    if (!VerifyPassword(current_password, user.password_hash))
      return Status(Code::kPermissionDenied, "currentPassword is not this user's password",
                    "currentPassword");
  }
  ASSIGN_OR_RETURN(std::string hash, Hash(password));
  return store_.SetUserPassword(id, hash);
}

Result<Principal> Users::SignIn(const std::string& email, const std::string& password) {
  HashSlot slot(hashing_);
  if (!slot.held()) return Busy();
  auto normalized = NormalizeEmail(email);
  auto user = normalized.ok() ? store_.FindUserByEmail(*normalized)
                              : Result<store::UserRecord>(normalized.status());
  if (!user.ok() && user.status().code() != Code::kNotFound &&
      user.status().code() != Code::kInvalidArgument)
    return user.status();
  // The decoy is checked when there is no such user, so both cases cost one hash.
  bool match = VerifyPassword(password, user.ok() ? user->password_hash : decoy_hash_);
  if (!user.ok() || !match) return Status(Code::kUnauthenticated, kWrongCredentials);
  ASSIGN_OR_RETURN(auto org, store_.GetOrg(user->org_id));
  return Principal{user->org_id, user->id, false, org.registered};
}

Result<Principal> Users::SignUp(const std::string& email, const std::string& password) {
  ASSIGN_OR_RETURN(std::string normalized, NormalizeEmail(email));
  RETURN_IF_ERROR(CheckPassword(password));
  ASSIGN_OR_RETURN(std::string hash, Hash(password));
  int64_t now = NowMillis();
  store::OrgRecord org{NewId("org"), SignUpOrgName(normalized), false, now, false};
  store::UserRecord user{NewId("usr"), org.id, normalized, hash, now};
  Status st = store_.CreateOrgWithUser(org, user);
  if (st.code() == Code::kConflict && store_.FindUserByEmail(normalized).ok())
    return Conflict("an account with this email exists; sign in instead");
  RETURN_IF_ERROR(st);
  return Principal{org.id, user.id, false, false};
}

}  // namespace adapt::core
