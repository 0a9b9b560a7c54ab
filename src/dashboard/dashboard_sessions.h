// DashboardSessions: who is signed in to the web dashboard. Signing in with an email and
// password (core::Users) or an API key opens a session named by a random token, which the
// browser keeps in an HttpOnly cookie. Sessions live in memory only: they end when they
// expire, when the person signs out, when their API key is deleted, or when adaptd restarts.
// A session acts with its organization's rights, never the admin's, so a stolen cookie cannot
// manage other organizations. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "core/auth.h"
#include "core/users.h"
#include "store/store.h"

namespace adapt::dashboard {

struct OpenedSession {
  std::string token;  // the cookie's value; only its hash is kept
  int64_t expires_at = 0;
  core::Principal who;
};

class DashboardSessions {
 public:
  static constexpr int64_t kLifetimeMillis = 12LL * 3600 * 1000;
  // More open sessions than this answer ResourceExhausted (after expired ones are dropped).
  static constexpr size_t kMaxSessions = 10000;

  DashboardSessions(store::Store& store, core::Auth& auth, core::Users& users,
                    std::function<int64_t()> now);

  // Unauthenticated for an unknown key, as the API answers.
  Result<OpenedSession> SignInWithKey(const std::string& key);
  // Unauthenticated for an unknown email or a wrong password (one sentence for both).
  Result<OpenedSession> SignInWithPassword(const std::string& email, const std::string& password);
  // The session's Principal, read again each time (so registering counts at once, and a
  // deleted key ends its sessions). Unauthenticated when the token is unknown or expired.
  Result<core::Principal> Find(const std::string& token);
  // Ends the session; an unknown token is already signed out.
  void SignOut(const std::string& token);

 private:
  struct Session {
    core::Principal who;
    std::string key_hash;       // set for a session opened with an API key
    std::string password_hash;  // the user's at sign-in, for one opened with a password
    int64_t expires_at = 0;
  };
  Result<OpenedSession> Open(core::Principal who, std::string key_hash,
                             std::string password_hash = "");

  store::Store& store_;
  core::Auth& auth_;
  core::Users& users_;
  std::function<int64_t()> now_;
  std::mutex mu_;
  std::unordered_map<std::string, Session> sessions_;  // by the token's SHA-256
};

}  // namespace adapt::dashboard
