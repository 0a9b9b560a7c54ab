#include "dashboard/dashboard_sessions.h"

#include <algorithm>

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
  // A key's session ends when the key expires, when that is sooner than the session's lifetime.
  ASSIGN_OR_RETURN(auto record, store_.FindApiKey(Sha256Hex(key)));
  return Open(who, record.expires_at);
}

Result<OpenedSession> DashboardSessions::SignInWithPassword(const std::string& email,
                                                            const std::string& password) {
  ASSIGN_OR_RETURN(auto who, users_.SignIn(email, password));
  return Open(who);
}

Result<OpenedSession> DashboardSessions::Open(core::Principal who, int64_t key_expires_at) {
  who.is_admin = false;
  int64_t now = now_();
  int64_t expires_at = now + kLifetimeMillis;
  if (key_expires_at != 0) expires_at = std::min(expires_at, key_expires_at);
  OpenedSession opened{RandomToken(32), expires_at, who};
  store::DashboardSessionRecord record{Sha256Hex(opened.token), who.org_id, who.key_id, now,
                                       opened.expires_at,       0};
  Status st = store_.CreateDashboardSession(record, static_cast<int64_t>(kMaxSessions));
  // Its key or user was deleted between the check and now.
  if (st.code() == Code::kNotFound) return SignedOut();
  RETURN_IF_ERROR(st);
  return opened;
}

Result<core::Principal> DashboardSessions::Find(const std::string& token) {
  if (token.empty()) return SignedOut();
  auto session = store_.FindDashboardSession(Sha256Hex(token), now_());
  if (!session.ok()) {
    if (session.status().code() == Code::kNotFound) return SignedOut();
    return session.status();
  }
  auto org = store_.GetOrg(session->org_id);
  if (!org.ok()) {
    if (org.status().code() == Code::kNotFound) return SignedOut();
    return org.status();
  }
  core::Principal who;
  who.org_id = session->org_id;
  who.key_id = session->key_id;
  who.is_admin = false;
  who.registered = org->registered;
  return who;
}

Status DashboardSessions::SignOut(const std::string& token) {
  if (token.empty()) return Status::Ok();
  return store_.RevokeDashboardSession(Sha256Hex(token), now_());
}

}  // namespace adapt::dashboard
