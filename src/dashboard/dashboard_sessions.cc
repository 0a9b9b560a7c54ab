#include "dashboard/dashboard_sessions.h"

#include "base/ids.h"

namespace adapt::dashboard {
namespace {

Status SignedOut() {
  return Status(Code::kUnauthenticated, "the dashboard session ended: sign in again");
}

}  // namespace

DashboardSessions::DashboardSessions(store::Store& store, core::Auth& auth, core::Users& users,
                                     std::function<int64_t()> now)
    : store_(store), auth_(auth), users_(users), now_(std::move(now)) {}

Result<OpenedSession> DashboardSessions::SignInWithKey(const std::string& key) {
  ASSIGN_OR_RETURN(auto who, auth_.Authenticate(key));
  return Open(who, Sha256Hex(key));
}

Result<OpenedSession> DashboardSessions::SignInWithPassword(const std::string& email,
                                                            const std::string& password) {
  ASSIGN_OR_RETURN(auto who, users_.SignIn(email, password));
  ASSIGN_OR_RETURN(store::UserRecord user, store_.GetUser(who.key_id));
  return Open(who, "", user.password_hash);
}

Result<OpenedSession> DashboardSessions::Open(core::Principal who, std::string key_hash,
                                              std::string password_hash) {
  who.is_admin = false;
  int64_t now = now_();
  OpenedSession opened{RandomToken(32), now + kLifetimeMillis, who};
  std::lock_guard lock(mu_);
  if (sessions_.size() >= kMaxSessions) {
    std::erase_if(sessions_, [now](const auto& s) { return s.second.expires_at <= now; });
    if (sessions_.size() >= kMaxSessions)
      return Status(Code::kResourceExhausted,
                    "too many dashboard sessions are open: try again later");
  }
  sessions_[Sha256Hex(opened.token)] = {who, std::move(key_hash), std::move(password_hash),
                                        opened.expires_at};
  return opened;
}

Result<core::Principal> DashboardSessions::Find(const std::string& token) {
  if (token.empty()) return SignedOut();
  std::string hash = Sha256Hex(token);
  Session session;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(hash);
    if (it == sessions_.end()) return SignedOut();
    if (it->second.expires_at <= now_()) {
      sessions_.erase(it);
      return SignedOut();
    }
    session = it->second;
  }
  if (!session.key_hash.empty()) {
    auto key = store_.FindApiKey(session.key_hash);
    if (!key.ok() && key.status().code() != Code::kNotFound) return key.status();
    // A revoked or expired key ends its sessions.
    if (!key.ok() || (key->expires_at != 0 && key->expires_at <= now_())) {
      SignOut(token);
      return SignedOut();
    }
  } else {
    // A deleted user, or one whose password changed, is signed out of every session.
    auto user = store_.GetUser(session.who.key_id);
    if (!user.ok() && user.status().code() != Code::kNotFound) return user.status();
    if (!user.ok() || user->password_hash != session.password_hash) {
      SignOut(token);
      return SignedOut();
    }
  }
  ASSIGN_OR_RETURN(auto org, store_.GetOrg(session.who.org_id));
  session.who.registered = org.registered;
  return session.who;
}

void DashboardSessions::SignOut(const std::string& token) {
  std::lock_guard lock(mu_);
  sessions_.erase(Sha256Hex(token));
}

}  // namespace adapt::dashboard
